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

const CONTROL: { action: ControlAction; operationId: string; summary: string; description: string }[] = [
  {
    action: 'start',
    operationId: 'startDeployment',
    summary:
      'Start: pending, failed or cancelled → deploying; a background roll-out makes it active or failed (developer)',
    description:
      'Moves a pending, failed or cancelled deployment to deploying; a background roll-out then makes it active or failed with the reason.',
  },
  {
    action: 'stop',
    operationId: 'stopDeployment',
    summary: 'Stop: deploying, active or paused → cancelled (developer)',
    description: 'Cancels a deploying, active or paused deployment; it stops serving chat.',
  },
  {
    action: 'pause',
    operationId: 'pauseDeployment',
    summary: 'Pause: active → paused (developer)',
    description: 'Pauses an active deployment; chat turns through it are refused until it resumes.',
  },
  {
    action: 'resume',
    operationId: 'resumeDeployment',
    summary: 'Resume: paused → active (developer)',
    description: 'Makes a paused deployment active again.',
  },
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
          description:
            'Creates a pending deployment of an agent to a channel and region. It serves chat only after POST /deployments/{deploymentId}/start.',
          body: CreateDeploymentBody,
          response: { 201: Deployment, ...errors },
        },
      },
      async (request, reply) => reply.code(201).send(await deployments.create(companyContext(request), request.body)),
    );

    app.get(
      '/deployments',
      {
        config: { listCache: true },
        schema: {
          operationId: 'listDeployments',
          tags,
          summary: "The company's deployments, newest first",
          description:
            "The company's deployments, newest first, filtered by type, status and channel (`skip`, `limit`).",
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
          description: 'One deployment of the company with its status and last error.',
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
          description:
            'Changes the fields sent of a deployment. A live deployment applies them at once; 409 while it is deploying.',
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
          description: 'Deletes a deployment, stopping it first when it is live.',
          params: DeploymentParams,
          response: { 204: Type.Null(), ...errors },
        },
      },
      async (request, reply) => {
        await deployments.remove(companyContext(request), request.params.deploymentId);
        return reply.code(204).send(null);
      },
    );

    for (const { action, operationId, summary, description } of CONTROL) {
      app.post(
        `/deployments/:deploymentId/${action}`,
        {
          preHandler: write,
          schema: {
            operationId,
            tags,
            summary,
            description,
            params: DeploymentParams,
            response: { 200: Deployment, ...errors },
          },
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
          description:
            'Log entries of a deployment, oldest first: the latest `limit`, or the first `limit` at or after `since`.',
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
