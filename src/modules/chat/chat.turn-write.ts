/**
 * The write of a chat turn once the reply is known: both messages, the conversation's counters
 * and the support query (opened on its first turn, moved by each agent turn) in one statement
 * (chat.repo `writeTurn`, with the support-queries module's part); a turn that also notifies the
 * team or queues the escalation e-mail runs that statement and those writes in one transaction.
 * The reply is reported complete only after the commit (synchronous_commit stays on).
 */
import { randomUUID } from 'node:crypto';
import type { Db, Executor } from '../../db/database.js';
import { AppErrors } from '../../http/errors.js';
import type { JobQueue } from '../../jobs/queue.js';
import { toEscalation } from '../agents/index.js';
import { ESCALATION_EMAIL_JOB, type EscalationEmailJob } from './chat.escalation.js';
import type { AgentNotifier, SupportRecorder } from './chat.ports.js';
import * as repo from './chat.repo.js';
import type { TurnOutcome } from './chat.runtime.js';
import { notifyToolCalls } from './chat.tool-records.js';
import type { PreparedTurn, TurnResult } from './chat.turn-types.js';
import type { Handoff } from './chat.handoff.js';
import type { ConversationEvent } from './chat.conversation-events.js';
import type { TurnJournal } from './chat.turn-journal.js';
import { HANDOFF_REASONS } from './chat.runtime.js';

/** What an agent turn records on its support query. */
type TurnInput = NonNullable<Parameters<SupportRecorder['turnRecord']>[0]['turn']>;

export interface TurnWriteDeps {
  db: Db;
  supportQueries: SupportRecorder | null;
  notifications: AgentNotifier | null;
  queue: Pick<JobQueue, 'send'> | null;
  /** Called once a turn's records have committed (the lists showing its figures are cleared). */
  turnCommitted?: ((companyId: string) => void) | null;
  /** An escalated turn hands the conversation to a person in its transaction (chat.handoff.ts). */
  handoff?: Pick<Handoff, 'startInTurn' | 'publish'> | null;
  /** The turn journal (chat.turn-journal.ts): a journaled turn's write deletes its row. */
  journal?: Pick<TurnJournal, 'owner'> | null;
}

export function createTurnWriter(deps: TurnWriteDeps) {
  const { db } = deps;

  /**
   * Writes the turn; `journaled`: its row in the journal is deleted by the write's statement (in
   * its transaction, if it has one), also when the turn is refused.
   */
  async function saveTurn(
    turn: PreparedTurn,
    outcome: TurnOutcome,
    finish: TurnResult['finish_reason'],
    elapsed: number,
    journaled = false,
  ): Promise<string | null> {
    try {
      return await writeTurn(turn, outcome, finish, elapsed, journaled);
    } finally {
      // Also after a failure: a late agent-turn record may have committed before it.
      deps.turnCommitted?.(turn.caller.companyId);
    }
  }

  async function writeTurn(
    turn: PreparedTurn,
    outcome: TurnOutcome,
    finish: TurnResult['finish_reason'],
    elapsed: number,
    journaled: boolean,
  ): Promise<string | null> {
    const { caller } = turn;
    const companyId = caller.companyId;
    const record = finish === 'stop';
    const agentTurn: TurnInput | null = record
      ? {
          resolved: outcome.resolved,
          escalated: outcome.escalated,
          ...(outcome.resolved ? { resolution: outcome.text.slice(0, 2000) } : {}),
          toolsUsed: [
            ...(outcome.retrieved > 0 ? ['knowledge_base'] : []),
            ...outcome.actions.map((action) => action.tool),
          ],
          agentActions: 1 + outcome.actions.length,
        }
      : null;
    const support = deps.supportQueries
      ? deps.supportQueries.turnRecord({ companyId, agentId: turn.agent.id, query: turn.query, turn: agentTurn })
      : null;
    const write: repo.TurnWrite = {
      companyId,
      conversationId: turn.conversation.id,
      messages: [
        { id: randomUUID(), role: 'user', content: turn.query },
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
      ],
      support,
      refuseClosed: record,
      journal: journaled && deps.journal ? { id: turn.id, owner: deps.journal.owner } : undefined,
    };
    const unresolved = Boolean(deps.notifications) && record && !outcome.resolved;
    const contact = toEscalation(turn.agent.escalation).contact_email;
    // An e-mail the agent already sent through its own integration is not sent again.
    const mailed = outcome.actions.some((action) => action.notification === 'email_sent' && action.status === 'ok');
    const escalationMail = Boolean(deps.queue) && record && outcome.escalated && Boolean(contact) && !mailed;
    const toolNotes = Boolean(deps.notifications) && outcome.actions.length > 0;
    const handingOff = Boolean(deps.handoff) && record && outcome.escalated;
    await turn.persist();
    // The common turn is one statement in autocommit: one round trip, one commit.
    if (!unresolved && !escalationMail && !toolNotes && !handingOff) {
      await recordLate(turn, written(turn, await repo.writeTurn(db, write)), agentTurn);
      return turn.id;
    }
    const staged: ConversationEvent[] = [];
    const id = await db.transaction().execute(async (trx) => {
      const result = written(turn, await repo.writeTurn(trx, write));
      if (handingOff) {
        const reason = outcome.handoffReason ?? HANDOFF_REASONS.couldNotAnswer;
        const event = await deps.handoff!.startInTurn(trx, { companyId, conversationId: turn.conversation.id, reason });
        if (event) staged.push(event);
      }
      const { queryId } = result;
      if (deps.supportQueries && agentTurn && !result.recorded && queryId)
        await deps.supportQueries.recordAgentTurn(trx, { companyId, queryId, ...agentTurn });
      if (unresolved) await notifyUnresolved(trx, turn, outcome, queryId, elapsed);
      if (toolNotes)
        await notifyToolCalls(deps.notifications!, trx, {
          companyId,
          agent: turn.agent,
          queryId,
          actions: outcome.actions,
        });
      if (escalationMail) {
        const job: EscalationEmailJob = {
          companyId,
          conversationId: turn.conversation.id,
          agentId: turn.agent.id,
          queryId,
          to: contact!,
        };
        await deps.queue!.send(trx, ESCALATION_EMAIL_JOB, job);
      }
      return turn.id;
    });
    deps.handoff?.publish(staged);
    return id;
  }

  /**
   * Two first turns of one conversation at once (one created empty beforehand): the second waited
   * for the first's lock, and the query the first opened is not in its statement's snapshot, so
   * its agent turn is recorded here, in a transaction of its own.
   */
  async function recordLate(turn: PreparedTurn, result: repo.TurnWriteResult, input: TurnInput | null) {
    if (!deps.supportQueries || !input || result.recorded || !result.queryId) return;
    const supportQueries = deps.supportQueries;
    const queryId = result.queryId;
    await db
      .transaction()
      .execute((trx) => supportQueries.recordAgentTurn(trx, { companyId: turn.caller.companyId, queryId, ...input }));
  }

  /** The write's outcome, or why nothing was written (the query closed, the conversation gone). */
  function written(turn: PreparedTurn, result: Awaited<ReturnType<typeof repo.writeTurn>>) {
    if (result.written) return result;
    if (result.conversationClosed) throw AppErrors.conflict(`Conversation ${turn.conversation.id} is closed`);
    if (result.closed) throw AppErrors.conflict('Support query is closed');
    throw AppErrors.notFound('Conversation', turn.conversation.id);
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
        ? `${turn.agent.title} handed a conversation to the team`
        : `${turn.agent.title} could not answer a question`,
      message: `“${turn.query.slice(0, 300)}”${escalated ? ' — the customer is waiting for a person.' : ' — nothing relevant was found in the knowledge base.'}`,
      metadata: {
        agent_id: turn.agent.id,
        ...(queryId ? { query_id: queryId } : {}),
        ...(escalated ? { conversation_id: turn.conversation.id } : {}),
        action_type: escalated ? 'handoff' : 'unanswered_question',
        tool_used: outcome.retrieved > 0 ? 'knowledge_base' : 'none',
        execution_time: `${(elapsed / 1000).toFixed(1)}s`,
      },
    });
  }

  return { saveTurn };
}
