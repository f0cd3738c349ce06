import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { companyContext } from '../../http/auth.js';
import { errorResponses } from '../../http/errors.js';
import { Uuid } from '../../http/schemas.js';
import type { AgentsService } from './agents.service.js';
import { Agent, AgentPage, CreateAgentBody, ListAgentsQuery, RegionPage, UpdateAgentBody } from './agents.schemas.js';

/** How far behind other instances' turns the cached agents list's performance figures may be. */
const FIGURES_MAX_AGE_MS = 1_000;

const errors = errorResponses('detail-status');
const tags = ['agents'];
const Params = Type.Object({ agentId: Uuid() });

export function agentsRoutes(agents: AgentsService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/agents',
      {
        schema: {
          operationId: 'createAgent',
          tags,
          summary: 'Create an agent (developer)',
          description:
            'Creates an agent: its model (`<provider>:<model>` of LLM_PROVIDERS, or the built-in knowledge-base responder), instructions, temperature, collections and escalation settings.',
          body: CreateAgentBody,
          response: { 201: Type.Ref(Agent), ...errors },
        },
      },
      async (request, reply) => reply.code(201).send(await agents.create(companyContext(request), request.body)),
    );

    app.get(
      '/agents',
      {
        schema: {
          operationId: 'listAgents',
          tags,
          summary: 'Agents of the active company, newest first',
          description:
            'Agents of the active company, newest first. Pages are cached per company: a change to an agent shows at once; ' +
            "`performance_metrics` show the turns this instance answered at once and other instances' turns within a second.",
          querystring: ListAgentsQuery,
          response: { 200: AgentPage, ...errors },
        },
        // Performance figures move with every turn and are not notified (src/http/list-cache.ts).
        config: { listCache: { maxAgeMs: FIGURES_MAX_AGE_MS } },
      },
      async (request) => agents.list(companyContext(request), request.query.skip, request.query.limit),
    );

    app.get(
      '/agents/:agentId',
      {
        schema: {
          operationId: 'getAgent',
          tags,
          summary: 'One agent with its performance metrics',
          description: 'One agent with its performance metrics computed from the support queries it handled.',
          params: Params,
          response: { 200: Type.Ref(Agent), ...errors },
        },
      },
      async (request) => agents.get(companyContext(request), request.params.agentId),
    );

    app.put(
      '/agents/:agentId',
      {
        schema: {
          operationId: 'updateAgent',
          tags,
          summary: 'Update an agent (developer); only the fields sent change',
          description: 'Changes the fields sent of an agent; live deployments serve the change at once.',
          params: Params,
          body: UpdateAgentBody,
          response: { 200: Type.Ref(Agent), ...errors },
        },
      },
      async (request) => agents.update(companyContext(request), request.params.agentId, request.body),
    );

    app.patch(
      '/agents/:agentId',
      {
        schema: {
          operationId: 'patchAgent',
          tags,
          summary: 'Same as PUT: a partial update (developer)',
          description: 'The same partial update as PUT /agents/{agentId}.',
          params: Params,
          body: UpdateAgentBody,
          response: { 200: Type.Ref(Agent), ...errors },
        },
      },
      async (request) => agents.update(companyContext(request), request.params.agentId, request.body),
    );

    app.delete(
      '/agents/:agentId',
      {
        schema: {
          operationId: 'deleteAgent',
          tags,
          summary: 'Delete an agent and its conversations (developer)',
          description: 'Deletes an agent with its conversations.',
          params: Params,
          response: { 204: Type.Null(), ...errors },
        },
      },
      async (request, reply) => {
        await agents.remove(companyContext(request), request.params.agentId);
        return reply.code(204).send(null);
      },
    );

    app.get(
      '/regions',
      {
        schema: {
          operationId: 'listRegions',
          tags: ['regions'],
          summary: 'Regions an agent can be deployed to; the agent_key region word is the slug',
          description: 'Regions a deployment can target; the slug is the region word of a chat agent_key.',
          response: { 200: RegionPage, ...errors },
        },
      },
      async (request) => {
        companyContext(request);
        return agents.regions();
      },
    );
  };
}
