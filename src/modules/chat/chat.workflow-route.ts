/**
 * Turns through a workflow's key: the workflow (from the serving cache), the agent the router
 * picks for the question (sticky to the agent answering the conversation), and the hand-off when
 * it changes — written once the turn produces output: the conversation and its support query
 * move to the new agent, and the team hears of it (`agent_action`).
 */
import type { Db } from '../../db/database.js';
import type { ChatCaller } from '../../http/caller.js';
import { AppErrors } from '../../http/errors.js';
import type { AgentRow } from '../agents/index.js';
import type { AgentNotifier, ServedWorkflow, SupportRecorder, WorkflowRouter } from './chat.ports.js';
import * as repo from './chat.repo.js';
import type { StreamEvent } from './chat.schemas.js';
import { handOffConversation } from './chat.workflow.repo.js';

/** The agent changed within a conversation: ids of the agents, why, and the step chosen. */
export interface Handoff {
  from: string;
  to: string;
  reason: string;
  step: string | null;
}

export interface RoutedTurn {
  workflowId: string;
  agent: AgentRow;
  handoff: Handoff | null;
}

export interface WorkflowRouteDeps {
  db: Db;
  router: WorkflowRouter;
  /** The company's workflow (through the serving cache). */
  findWorkflow(companyId: string, workflowId: string): Promise<ServedWorkflow | undefined>;
  loadAgent(companyId: string, agentId: string): Promise<AgentRow | undefined>;
  notifications: AgentNotifier | null;
  supportQueries: SupportRecorder | null;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The stream's hand-off event, sent before the new agent's answer. */
export function handoffChunk(handoff: Handoff): Omit<StreamEvent, 'conversation_id'> {
  const body = { from: handoff.from, to: handoff.to, reason: handoff.reason, step: handoff.step };
  return { type: 'chunk', content: JSON.stringify({ handoff: body }), kind: 'handoff', handoff: body };
}

export function createWorkflowRoute(deps: WorkflowRouteDeps) {
  async function notify(caller: ChatCaller, workflowId: string, handoff: Handoff, queryId: string | null) {
    const [from, to] = await Promise.all([
      deps.loadAgent(caller.companyId, handoff.from),
      deps.loadAgent(caller.companyId, handoff.to),
    ]);
    return {
      companyId: caller.companyId,
      senderId: null,
      notificationType: 'agent_action' as const,
      category: 'agent' as const,
      priority: 'low' as const,
      title: `${from?.title || 'An agent'} handed a conversation to ${to?.title || 'another agent'}`,
      message: `Workflow step ${handoff.step ? `'${handoff.step}'` : '(default agent)'}: ${handoff.reason}`.slice(
        0,
        1000,
      ),
      metadata: {
        agent_id: handoff.to,
        previous_agent_id: handoff.from,
        workflow_id: workflowId,
        action_type: 'handoff',
        ...(handoff.step ? { step: handoff.step } : {}),
        ...(queryId ? { query_id: queryId } : {}),
      },
    };
  }

  return {
    /**
     * The turn of workflow `workflowId` (undefined: the company has no such workflow): the agent
     * that answers `query` and the hand-off if the conversation was with another agent.
     */
    async route(
      caller: ChatCaller,
      workflowId: string,
      query: string | null,
      conversationId: string | undefined,
    ): Promise<RoutedTurn | undefined> {
      const workflow = await deps.findWorkflow(caller.companyId, workflowId);
      if (!workflow) return undefined;
      let current: string | null = null;
      if (conversationId !== undefined && UUID.test(conversationId)) {
        const conversation = await repo.findConversation(deps.db, caller.companyId, conversationId, caller.agentId);
        if (conversation?.workflow_id === workflow.id) current = conversation.agent_id;
      }
      const decision = await deps.router.route(workflow, { query: query ?? '', currentAgentId: current });
      let agent = await deps.loadAgent(caller.companyId, decision.agentId);
      let { reason, step } = decision;
      if (!agent && decision.agentId !== workflow.default_agent_id) {
        agent = await deps.loadAgent(caller.companyId, workflow.default_agent_id);
        reason = `the agent of step '${step}' no longer exists: the default agent answers`;
        step = null;
      }
      if (!agent)
        throw AppErrors.conflict(`Workflow ${workflow.id} cannot answer: agent ${decision.agentId} no longer exists`);
      const handoff = current && current !== agent.id ? { from: current, to: agent.id, reason, step } : null;
      return { workflowId: workflow.id, agent, handoff };
    },

    /**
     * `persist` followed by the hand-off's write (once, however often it is called): the
     * conversation and its support query move to the new agent and the team is told, in one
     * transaction.
     */
    withHandoff(
      caller: ChatCaller,
      routed: RoutedTurn | undefined | null,
      conversationId: string,
      persist: () => Promise<void>,
    ): () => Promise<void> {
      const handoff = routed?.handoff;
      if (!handoff || !routed) return persist;
      let written: Promise<void> | null = null;
      const write = () =>
        deps.db.transaction().execute(async (trx) => {
          const moved = await handOffConversation(trx, caller.companyId, conversationId, handoff.from, handoff.to);
          if (moved?.previousQueryId && deps.supportQueries)
            await deps.supportQueries.reassign(trx, {
              companyId: caller.companyId,
              queryId: moved.previousQueryId,
              agentId: handoff.to,
            });
          if (moved && deps.notifications)
            await deps.notifications.notify(
              trx,
              await notify(caller, routed.workflowId, handoff, moved.previousQueryId),
            );
        });
      return () => (written ??= persist().then(write));
    },
  };
}

export type WorkflowRoute = ReturnType<typeof createWorkflowRoute>;
