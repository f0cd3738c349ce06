import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { companyContext } from '../../http/auth.js';
import { errorResponses } from '../../http/errors.js';
import { Uuid } from '../../http/schemas.js';
import type { WorkflowsService } from './workflows.service.js';
import {
  CreateWorkflowBody,
  ListWorkflowsQuery,
  UpdateWorkflowBody,
  Workflow,
  WorkflowPage,
} from './workflows.schemas.js';

const errors = errorResponses('detail-status');
const tags = ['workflows'];
const Params = Type.Object({ workflowId: Uuid() });

export function workflowsRoutes(workflows: WorkflowsService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/workflows',
      {
        schema: {
          operationId: 'createWorkflow',
          tags,
          summary: 'Create a workflow (developer)',
          description:
            'Creates a workflow: 1–20 steps (an agent of your company each, and when it applies: query types, keywords, languages), a default agent, and the router (`rules` or a configured model). Deploy it with `deployable_type: workflow`.',
          body: CreateWorkflowBody,
          response: { 201: Type.Ref(Workflow), ...errors },
        },
      },
      async (request, reply) => reply.code(201).send(await workflows.create(companyContext(request), request.body)),
    );

    app.get(
      '/workflows',
      {
        schema: {
          operationId: 'listWorkflows',
          tags,
          summary: 'Workflows of the active company, newest first',
          description: 'Workflows of the active company, newest first.',
          querystring: ListWorkflowsQuery,
          response: { 200: WorkflowPage, ...errors },
        },
      },
      async (request) => workflows.list(companyContext(request), request.query.skip, request.query.limit),
    );

    app.get(
      '/workflows/:workflowId',
      {
        schema: {
          operationId: 'getWorkflow',
          tags,
          summary: 'One workflow',
          description: 'One workflow with its steps.',
          params: Params,
          response: { 200: Type.Ref(Workflow), ...errors },
        },
      },
      async (request) => workflows.get(companyContext(request), request.params.workflowId),
    );

    app.put(
      '/workflows/:workflowId',
      {
        schema: {
          operationId: 'updateWorkflow',
          tags,
          summary: 'Update a workflow (developer); only the fields sent change',
          description:
            'Changes the fields sent (steps are replaced whole); a live deployment serves the change at once.',
          params: Params,
          body: UpdateWorkflowBody,
          response: { 200: Type.Ref(Workflow), ...errors },
        },
      },
      async (request) => workflows.update(companyContext(request), request.params.workflowId, request.body),
    );

    app.patch(
      '/workflows/:workflowId',
      {
        schema: {
          operationId: 'patchWorkflow',
          tags,
          summary: 'Same as PUT: a partial update (developer)',
          description: 'The same partial update as PUT /workflows/{workflowId}.',
          params: Params,
          body: UpdateWorkflowBody,
          response: { 200: Type.Ref(Workflow), ...errors },
        },
      },
      async (request) => workflows.update(companyContext(request), request.params.workflowId, request.body),
    );

    app.delete(
      '/workflows/:workflowId',
      {
        schema: {
          operationId: 'deleteWorkflow',
          tags,
          summary: 'Delete a workflow (developer)',
          description: 'Deletes a workflow; refused with 409 while a live deployment serves it.',
          params: Params,
          response: { 204: Type.Null(), ...errors },
        },
      },
      async (request, reply) => {
        await workflows.remove(companyContext(request), request.params.workflowId);
        return reply.code(204).send(null);
      },
    );
  };
}
