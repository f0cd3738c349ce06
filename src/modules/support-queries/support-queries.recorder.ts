/**
 * How the platform records support work: the chat module opens a query per conversation,
 * records each agent turn, the customer's rating and the closing. Every function runs inside
 * the caller's transaction (executor first) and takes the company id, so tenancy holds.
 *
 * Status: open → in_progress (first agent turn) → resolved (the agent resolved it, or a human
 * after escalation) → closed. An escalation keeps the query in_progress with
 * escalated_to_human = true until someone resolves or closes it.
 */
import type { Executor } from '../../db/database.js';
import { AppErrors } from '../../http/errors.js';
import type { Clock } from '../../lib/clock.js';
import { classifyPriority, classifyQueryType } from './support-queries.classify.js';
import * as repo from './support-queries.repo.js';
import type { Priority, QueryType } from './support-queries.tables.js';

export interface OpenQueryInput {
  companyId: string;
  endUserId: string;
  agentId: string;
  deploymentId: string | null;
  conversationId: string;
  subject: string;
  description: string;
  queryType?: QueryType;
  priority?: Priority;
}

export interface AgentTurnInput {
  companyId: string;
  queryId: string;
  /** The agent considers the customer's problem solved by this turn. */
  resolved: boolean;
  /** The agent handed the conversation to a human. */
  escalated: boolean;
  resolution?: string;
  toolsUsed?: string[];
  agentActions?: number;
}

const SUBJECT_MAX = 200;

/** The subject of a query: the first line of the first message, shortened on a word boundary. */
export function subjectOf(text: string): string {
  const line = text.trim().split(/\r?\n/, 1)[0]?.trim() ?? '';
  if (line.length <= SUBJECT_MAX) return line || '(no subject)';
  const cut = line.slice(0, SUBJECT_MAX - 1);
  return `${cut.slice(0, Math.max(cut.lastIndexOf(' '), SUBJECT_MAX / 2))}…`;
}

export function createSupportRecorder(deps: { clock: Clock }) {
  const { clock } = deps;

  async function locked(executor: Executor, companyId: string, queryId: string) {
    const row = await repo.lockSupportQuery(executor, companyId, queryId);
    if (!row) throw AppErrors.notFound('Support query', queryId);
    return row;
  }

  return {
    /** The platform record of an end user (per company and external id); email and name are updated when given. */
    async ensureEndUser(
      executor: Executor,
      companyId: string,
      externalId: string,
      profile: { email?: string | null; name?: string | null } = {},
    ) {
      return repo.upsertEndUser(executor, companyId, externalId, profile);
    },

    /** Opens the query of a conversation (or returns the one it already has), classified by rules when not given. */
    async openForConversation(executor: Executor, input: OpenQueryInput): Promise<{ id: string }> {
      const text = `${input.subject}\n${input.description}`;
      const now = clock.now();
      const { id } = await repo.insertSupportQuery(executor, {
        company_id: input.companyId,
        user_id: input.endUserId,
        agent_id: input.agentId,
        deployment_id: input.deploymentId,
        conversation_id: input.conversationId,
        query_type: input.queryType ?? classifyQueryType(text),
        priority: input.priority ?? classifyPriority(text),
        subject: subjectOf(input.subject),
        description: input.description,
        created_at: now,
        updated_at: now,
      });
      return { id };
    },

    /** Records one agent turn: counters and tools, then the status move it implies. */
    async recordAgentTurn(executor: Executor, input: AgentTurnInput): Promise<void> {
      const row = await locked(executor, input.companyId, input.queryId);
      if (row.status === 'closed') throw AppErrors.conflict('Support query is closed');
      const now = clock.now();
      const tools = [...new Set([...row.tools_used, ...(input.toolsUsed ?? [])])];
      const escalated = row.escalated_to_human || input.escalated;
      const patch: Parameters<typeof repo.updateSupportQuery>[3] = {
        agent_actions_count: row.agent_actions_count + Math.max(0, input.agentActions ?? 0),
        tools_used: tools,
        escalated_to_human: escalated,
        updated_at: now,
        ...(input.resolution !== undefined ? { resolution: input.resolution } : {}),
      };
      if (input.resolved && row.status !== 'resolved') {
        Object.assign(patch, {
          status: 'resolved',
          resolved_at: now,
          resolution_method: escalated ? 'human' : 'automated',
        });
      } else if (input.escalated && row.status === 'resolved') {
        // The customer came back with a problem the agent could not solve: work reopens.
        Object.assign(patch, { status: 'in_progress', resolved_at: null, resolution_method: null });
      } else if (row.status === 'open') {
        patch.status = 'in_progress';
      }
      await repo.updateSupportQuery(executor, input.companyId, input.queryId, patch);
    },

    /**
     * The support side of a chat turn written in the turn's own statement (see
     * `repo.turnRecordCtes`): opens the conversation's query on its first turn, already in the
     * state `turn` leaves it in, or moves the existing one as `recordAgentTurn` does. `params` are
     * the values; `ctes`, `lock` and `closed` the SQL over them, whose text depends on `shape`
     * alone (the turn's statement is compiled once per shape).
     */
    turnRecord(input: {
      companyId: string;
      agentId: string;
      query: string;
      turn: Omit<AgentTurnInput, 'companyId' | 'queryId'> | null;
    }) {
      const text = `${input.query}\n${input.query}`;
      const turn = input.turn;
      return {
        shape: turn ? 'turn' : 'no turn',
        params: repo.turnRecordParams({
          companyId: input.companyId,
          agentId: input.agentId,
          queryType: classifyQueryType(text),
          priority: classifyPriority(text),
          subject: subjectOf(input.query),
          description: input.query,
          now: clock.now(),
          turn: turn && {
            resolved: turn.resolved,
            escalated: turn.escalated,
            resolution: turn.resolution ?? null,
            toolsUsed: turn.toolsUsed ?? [],
            actions: Math.max(0, turn.agentActions ?? 0),
          },
        }),
        ctes: (params: repo.TurnRecordParams, shape: string) => repo.turnRecordCtes(params, shape === 'turn'),
        lock: (params: repo.TurnRecordParams) => repo.turnQueryLock(params.companyId),
        closed: repo.turnQueryClosed,
      };
    },

    /** The customer's rating of the conversation, 1 to 5. */
    async recordSatisfaction(
      executor: Executor,
      input: { companyId: string; queryId: string; rating: number },
    ): Promise<void> {
      if (!Number.isInteger(input.rating) || input.rating < 1 || input.rating > 5) {
        throw AppErrors.validation(`Rating must be an integer from 1 to 5, got ${input.rating}`);
      }
      await locked(executor, input.companyId, input.queryId);
      await repo.updateSupportQuery(executor, input.companyId, input.queryId, {
        customer_satisfaction: input.rating,
        updated_at: clock.now(),
      });
    },

    /**
     * A workflow handed the conversation to another agent: the query is now that agent's (its
     * outcome is what that agent's turns make of it, so its metrics count it).
     */
    async reassign(executor: Executor, input: { companyId: string; queryId: string; agentId: string }): Promise<void> {
      await locked(executor, input.companyId, input.queryId);
      await repo.updateSupportQuery(executor, input.companyId, input.queryId, {
        agent_id: input.agentId,
        updated_at: clock.now(),
      });
    },

    /**
     * The conversation went to a person (a hand-off, or a person taking over): escalated to a
     * human, in progress (a resolved query reopens). A closed query is left as it is.
     */
    async escalate(executor: Executor, input: { companyId: string; queryId: string }): Promise<void> {
      const row = await locked(executor, input.companyId, input.queryId);
      if (row.status === 'closed' || (row.escalated_to_human && row.status === 'in_progress')) return;
      await repo.updateSupportQuery(executor, input.companyId, input.queryId, {
        escalated_to_human: true,
        status: 'in_progress',
        resolved_at: null,
        resolution_method: null,
        updated_at: clock.now(),
      });
    },

    /**
     * A person closed the conversation: the query is resolved by that person (`resolution_method`
     * human, `resolved_by`, escalated to a human), with their resolution text when given. A query
     * already closed stays as it is; one already resolved keeps its first resolution time.
     */
    async resolveByPerson(
      executor: Executor,
      input: { companyId: string; queryId: string; userId: string; resolution?: string | undefined },
    ): Promise<void> {
      const row = await locked(executor, input.companyId, input.queryId);
      if (row.status === 'closed') return;
      const now = clock.now();
      await repo.updateSupportQuery(executor, input.companyId, input.queryId, {
        status: 'resolved',
        resolution_method: 'human',
        escalated_to_human: true,
        resolved_by: input.userId,
        resolved_at: row.status === 'resolved' && row.resolved_at ? row.resolved_at : now,
        updated_at: now,
        ...(input.resolution !== undefined ? { resolution: input.resolution } : {}),
      });
    },

    /** Closes the query (the conversation was closed or went inactive); closing twice is a no-op. */
    async close(executor: Executor, input: { companyId: string; queryId: string }): Promise<void> {
      const row = await locked(executor, input.companyId, input.queryId);
      if (row.status === 'closed') return;
      const now = clock.now();
      await repo.updateSupportQuery(executor, input.companyId, input.queryId, {
        status: 'closed',
        closed_at: now,
        updated_at: now,
      });
    },

    /** A note on a query, by a team member (userId) or by the agent or platform (null). */
    async addNote(
      executor: Executor,
      input: { companyId: string; queryId: string; userId: string | null; content: string; isInternal?: boolean },
    ) {
      await locked(executor, input.companyId, input.queryId);
      return repo.insertSupportNote(executor, {
        company_id: input.companyId,
        query_id: input.queryId,
        user_id: input.userId,
        content: input.content,
        is_internal: input.isInternal ?? true,
        created_at: clock.now(),
      });
    },
  };
}

export type SupportRecorder = ReturnType<typeof createSupportRecorder>;
