import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { companyContext, requireRole } from '../../http/auth.js';
import { errorResponses } from '../../http/errors.js';
import { parseIsoDate } from '../../http/schemas.js';
import type { ControlAction } from './deployment-state.js';
import {
  CreateDeploymentBody,
  Deployment,
  DeploymentPage,
  DeploymentParams,
  ListDeploymentsQuery,
  LogsQuery,
  LogsResponse,
  UpdateDeploymentBody,
} from './deployments.schemas.js';
import type { DeploymentsService } from './deployments.service.js';

const errors = errorResponses('detail-status');
const tags = ['deployments'];
const write = requireRole('developer');

const CONTROL: { action: ControlAction; operationId: string; summary: string }[] = [
  {
    action: 'start',
    operationId: 'startDeployment',
    summary:
      'Start: pending, failed or cancelled → deploying; a background roll-out makes it active or failed (developer)',
  },
  {
    action: 'stop',
    operationId: 'stopDeployment',
    summary: 'Stop: deploying, active or paused → cancelled (developer)',
  },
  { action: 'pause', operationId: 'pauseDeployment', summary: 'Pause: active → paused (developer)' },
  { action: 'resume', operationId: 'resumeDeployment', summary: 'Resume: paused → active (developer)' },
];

export function deploymentsRoutes(deployments: DeploymentsService): FastifyPluginAsyncTypebox {
  return async (app) => {
    // Control calls carry no body; a client that still sends `content-type: application/json`
    // with an empty body is served instead of refused (any non-empty body is parsed as usual).
    const json = app.getDefaultJsonParser('error', 'error');
    app.removeContentTypeParser('application/json');
    app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) =>
      body === '' ? done(null, undefined) : json(request, body.toString(), done),
    );

    app.post(
      '/deployments',
      {
        preHandler: write,
        schema: {
          operationId: 'createDeployment',
          tags,
          summary: 'Create a deployment of an agent to a channel and region (pending; developer)',
          body: CreateDeploymentBody,
          response: { 201: Deployment, ...errors },
        },
      },
      async (request, reply) => reply.code(201).send(await deployments.create(companyContext(request), request.body)),
    );

    app.get(
      '/deployments',
      {
        schema: {
          operationId: 'listDeployments',
          tags,
          summary: "The company's deployments, newest first",
          querystring: ListDeploymentsQuery,
          response: { 200: DeploymentPage, ...errors },
        },
      },
      async (request) => deployments.list(companyContext(request), request.query),
    );

    app.get(
      '/deployments/:deploymentId',
      {
        schema: {
          operationId: 'getDeployment',
          tags,
          summary: 'One deployment',
          params: DeploymentParams,
          response: { 200: Deployment, ...errors },
        },
      },
      async (request) => deployments.get(companyContext(request), request.params.deploymentId),
    );

    app.put(
      '/deployments/:deploymentId',
      {
        preHandler: write,
        schema: {
          operationId: 'updateDeployment',
          tags,
          summary: 'Update settings; a live deployment applies them at once (developer; 409 while deploying)',
          params: DeploymentParams,
          body: UpdateDeploymentBody,
          response: { 200: Deployment, ...errors },
        },
      },
      async (request) => deployments.update(companyContext(request), request.params.deploymentId, request.body),
    );

    app.delete(
      '/deployments/:deploymentId',
      {
        preHandler: write,
        schema: {
          operationId: 'deleteDeployment',
          tags,
          summary: 'Delete; a live deployment is stopped first (developer)',
          params: DeploymentParams,
          response: { 204: Type.Null(), ...errors },
        },
      },
      async (request, reply) => {
        await deployments.remove(companyContext(request), request.params.deploymentId);
        return reply.code(204).send(null);
      },
    );

    for (const { action, operationId, summary } of CONTROL) {
      app.post(
        `/deployments/:deploymentId/${action}`,
        {
          preHandler: write,
          schema: { operationId, tags, summary, params: DeploymentParams, response: { 200: Deployment, ...errors } },
        },
        async (request) => deployments.control(companyContext(request), request.params.deploymentId, action),
      );
    }

    app.get(
      '/deployments/:deploymentId/logs',
      {
        schema: {
          operationId: 'getDeploymentLogs',
          tags,
          summary: 'Log entries, oldest first: the latest `limit`, or the first `limit` at or after `since`',
          params: DeploymentParams,
          querystring: LogsQuery,
          response: { 200: LogsResponse, ...errors },
        },
      },
      async (request) => {
        const { since, limit } = request.query;
        return deployments.logs(
          companyContext(request),
          request.params.deploymentId,
          since ? parseIsoDate(since) : undefined,
          limit,
        );
      },
    );
  };
}
