/**
 * The write of a chat turn: both messages, the support query (opened on the conversation's first
 * turn, then moved by each agent turn), the team notifications and the escalation e-mail job, in
 * one transaction once the reply is known.
 */
import type { Db, Executor } from '../../db/database.js';
import type { JobQueue } from '../../jobs/queue.js';
import { toEscalation } from '../agents/index.js';
import { ESCALATION_EMAIL_JOB, type EscalationEmailJob } from './chat.escalation.js';
import type { AgentNotifier, SupportRecorder } from './chat.ports.js';
import * as repo from './chat.repo.js';
import type { TurnOutcome } from './chat.runtime.js';
import { notifyToolCalls } from './chat.tool-records.js';
import type { PreparedTurn, TurnResult } from './chat.turns.js';

export interface TurnWriteDeps {
  db: Db;
  supportQueries: SupportRecorder | null;
  notifications: AgentNotifier | null;
  queue: Pick<JobQueue, 'send'> | null;
}

export function createTurnWriter(deps: TurnWriteDeps) {
  const { db } = deps;

  async function saveTurn(
    turn: PreparedTurn,
    outcome: TurnOutcome,
    finish: TurnResult['finish_reason'],
    elapsed: number,
  ) {
    const { caller } = turn;
    await turn.persist();
    return db.transaction().execute(async (trx) => {
      const conversation =
        (await repo.lockConversation(trx, caller.companyId, turn.conversation.id)) ?? turn.conversation;
      const queryId = await supportQueryOf(trx, turn, conversation);
      const [, answer] = await repo.appendMessages(trx, caller.companyId, conversation.id, [
        { role: 'user', content: turn.query },
        {
          id: turn.id,
          role: 'assistant',
          content: outcome.text,
          citations: outcome.citations,
          toolCalls: outcome.actions,
          model: outcome.model,
          was_resolved: outcome.resolved,
          response_time_ms: elapsed,
          finish_reason: finish,
        },
      ]);
      if (queryId && deps.supportQueries && finish === 'stop') {
        await deps.supportQueries.recordAgentTurn(trx, {
          companyId: caller.companyId,
          queryId,
          resolved: outcome.resolved,
          escalated: outcome.escalated,
          ...(outcome.resolved ? { resolution: outcome.text.slice(0, 2000) } : {}),
          toolsUsed: [
            ...(outcome.retrieved > 0 ? ['knowledge_base'] : []),
            ...outcome.actions.map((action) => action.tool),
          ],
          agentActions: 1 + outcome.actions.length,
        });
      }
      if (deps.notifications && finish === 'stop' && !outcome.resolved)
        await notifyUnresolved(trx, turn, outcome, queryId, elapsed);
      if (deps.notifications && outcome.actions.length)
        await notifyToolCalls(deps.notifications, trx, {
          companyId: caller.companyId,
          agent: turn.agent,
          queryId,
          actions: outcome.actions,
        });
      const contact = toEscalation(turn.agent.escalation).contact_email;
      // An e-mail the agent already sent through its own integration is not sent again.
      const mailed = outcome.actions.some((action) => action.notification === 'email_sent' && action.status === 'ok');
      if (deps.queue && finish === 'stop' && outcome.escalated && contact && !mailed) {
        const job: EscalationEmailJob = {
          companyId: caller.companyId,
          conversationId: conversation.id,
          agentId: turn.agent.id,
          queryId,
          to: contact,
        };
        await deps.queue.send(trx, ESCALATION_EMAIL_JOB, job);
      }
      return answer?.id ?? null;
    });
  }

  async function supportQueryOf(
    trx: Executor,
    turn: PreparedTurn,
    conversation: repo.ConversationRow,
  ): Promise<string | null> {
    if (!deps.supportQueries) return null;
    if (conversation.support_query_id) return conversation.support_query_id;
    const { companyId } = turn.caller;
    const externalId = conversation.external_user_id ?? `conversation:${conversation.id}`;
    const endUser = await deps.supportQueries.ensureEndUser(
      trx,
      companyId,
      externalId,
      conversation.external_user_id ? {} : { name: 'Anonymous visitor' },
    );
    const query = await deps.supportQueries.openForConversation(trx, {
      companyId,
      endUserId: endUser.id,
      agentId: turn.agent.id,
      deploymentId: conversation.deployment_id,
      conversationId: conversation.id,
      subject: turn.query,
      description: turn.query,
    });
    await repo.updateConversation(trx, companyId, conversation.id, {
      support_query_id: query.id,
      end_user_id: endUser.id,
    });
    // A rating given before the first turn (feedback on a conversation created empty) carries over.
    const feedback = await repo.findFeedback(trx, companyId, conversation.id);
    if (feedback)
      await deps.supportQueries.recordSatisfaction(trx, { companyId, queryId: query.id, rating: feedback.rating });
    return query.id;
  }

  async function notifyUnresolved(
    trx: Executor,
    turn: PreparedTurn,
    outcome: TurnOutcome,
    queryId: string | null,
    elapsed: number,
  ) {
    const escalated = outcome.escalated;
    await deps.notifications!.notify(trx, {
      companyId: turn.caller.companyId,
      senderId: null,
      notificationType: 'agent_action',
      category: 'agent',
      priority: escalated ? 'high' : 'medium',
      title: escalated
        ? `${turn.agent.title} escalated a conversation`
        : `${turn.agent.title} could not answer a question`,
      message: `“${turn.query.slice(0, 300)}”${escalated ? ' — the customer is waiting for a person.' : ' — nothing relevant was found in the knowledge base.'}`,
      metadata: {
        agent_id: turn.agent.id,
        ...(queryId ? { query_id: queryId } : {}),
        action_type: escalated ? 'escalation' : 'unanswered_question',
        tool_used: outcome.retrieved > 0 ? 'knowledge_base' : 'none',
        execution_time: `${(elapsed / 1000).toFixed(1)}s`,
      },
    });
  }

  return { saveTurn };
}
