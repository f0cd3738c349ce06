/**
 * Conversations of a chat token's company: create, list, rename or close, message history with
 * cursor pagination, feedback. A token bound to an agent sees and talks to that agent only.
 * Turns (the chat endpoints) are in chat.turns.ts.
 */
import type { Db } from '../../db/database.js';
import type { ChatCaller } from '../../http/caller.js';
import { AppErrors } from '../../http/errors.js';
import type { PageOf } from '../../http/schemas.js';
import type { Clock } from '../../lib/clock.js';
import { findAgent } from '../agents/index.js';
import * as repo from './chat.repo.js';
import type { ChatDeployments, SupportRecorder } from './chat.ports.js';
import type {
  Conversation,
  CreateConversationBody,
  Feedback,
  ListConversationsQuery,
  Message,
  MessagePage,
  MessagesQuery,
  UpdateConversationBody,
} from './chat.schemas.js';

export interface ConversationsDeps {
  db: Db;
  clock: Clock;
  supportQueries: SupportRecorder | null;
  deployments: ChatDeployments | null;
}

export function toConversation(row: repo.ConversationRow): Conversation {
  return {
    id: row.id,
    agent_id: row.agent_id,
    workflow_id: row.workflow_id,
    deployment_id: row.deployment_id,
    title: row.title,
    status: row.status,
    user: row.external_user_id,
    channel: row.channel,
    region: row.region,
    support_query_id: row.support_query_id,
    message_count: row.message_count,
    last_message_at: row.last_message_at?.toISOString() ?? null,
    closed_at: row.closed_at?.toISOString() ?? null,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

export function toMessage(row: repo.MessageRow): Message {
  return {
    id: row.id,
    conversation_id: row.conversation_id,
    role: row.role,
    content: row.content,
    citations: row.citations,
    model: row.model,
    agent_id: row.agent_id,
    was_resolved: row.was_resolved,
    response_time_ms: row.response_time_ms,
    finish_reason: row.finish_reason,
    ...(row.role === 'human' ? { author_id: row.author_id } : {}),
    created_at: row.created_at.toISOString(),
  };
}

/** A bound token may only name its own agent. */
export function checkAgentAllowed(caller: ChatCaller, agentId: string) {
  if (caller.agentId && caller.agentId !== agentId) {
    throw AppErrors.forbidden(`This API token is bound to agent ${caller.agentId} and cannot use agent ${agentId}`);
  }
}

const encodeCursor = (seq: number) => Buffer.from(`m:${seq}`).toString('base64url');
function decodeCursor(cursor: string): number {
  const match = /^m:(\d{1,18})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!match) throw AppErrors.validation(`Invalid query parameter 'cursor': not a cursor returned by this endpoint`);
  return Number(match[1]);
}

export function createConversationsService(deps: ConversationsDeps) {
  const { db } = deps;

  async function mustFind(caller: ChatCaller, conversationId: string) {
    const row = await repo.findConversation(db, caller.companyId, conversationId, caller.agentId);
    if (!row) throw AppErrors.notFound('Conversation', conversationId);
    return row;
  }

  return {
    mustFind,

    async create(caller: ChatCaller, body: CreateConversationBody): Promise<Conversation> {
      checkAgentAllowed(caller, body.agent_id);
      const agent = await findAgent(db, caller.companyId, body.agent_id);
      if (!agent) throw AppErrors.notFound('Agent', body.agent_id);
      if (
        body.deployment_id &&
        !(await repo.deploymentExists(db, caller.companyId, body.deployment_id, body.agent_id))
      ) {
        throw AppErrors.notFound('Deployment', body.deployment_id);
      }
      // The agent's welcome message opens the conversation, so it is part of what the model sees.
      return db.transaction().execute(async (trx) => {
        const row = await repo.insertConversation(trx, {
          company_id: caller.companyId,
          agent_id: body.agent_id,
          deployment_id: body.deployment_id ?? null,
          chat_token_id: caller.tokenId,
          title: body.title ?? '',
          external_user_id: body.user ?? null,
        });
        if (!agent.welcome_message) return toConversation(row);
        await repo.appendMessages(trx, caller.companyId, row.id, [
          { role: 'assistant', content: agent.welcome_message, finish_reason: 'stop' },
        ]);
        return toConversation({ ...row, message_count: 1, last_message_at: row.created_at });
      });
    },

    async list(caller: ChatCaller, query: ListConversationsQuery): Promise<PageOf<Conversation>> {
      if (query.agent_id) checkAgentAllowed(caller, query.agent_id);
      const filter = { agentId: caller.agentId ?? query.agent_id, user: query.user, status: query.status };
      const { rows, total } = await repo.listConversations(db, caller.companyId, filter, query.skip, query.limit);
      return { data: rows.map(toConversation), total, skip: query.skip, limit: query.limit };
    },

    async get(caller: ChatCaller, conversationId: string): Promise<Conversation> {
      return toConversation(await mustFind(caller, conversationId));
    },

    /** Renames, or closes (for good: its support query closes with it). */
    async update(caller: ChatCaller, conversationId: string, body: UpdateConversationBody): Promise<Conversation> {
      return db.transaction().execute(async (trx) => {
        const current = await repo.lockConversation(trx, caller.companyId, conversationId);
        if (!current || (caller.agentId && current.agent_id !== caller.agentId))
          throw AppErrors.notFound('Conversation', conversationId);
        if (body.status === 'open' && current.status === 'closed') {
          throw AppErrors.conflict(
            `Conversation ${conversationId} is closed; a closed conversation cannot be reopened (start a new one)`,
          );
        }
        const closing = body.status === 'closed' && current.status === 'open';
        const row = await repo.updateConversation(trx, caller.companyId, conversationId, {
          ...(body.title !== undefined ? { title: body.title } : {}),
          ...(closing ? { status: 'closed' as const, closed_at: deps.clock.now() } : {}),
        });
        if (closing && current.support_query_id && deps.supportQueries) {
          await deps.supportQueries.close(trx, { companyId: caller.companyId, queryId: current.support_query_id });
        }
        return toConversation(row ?? current);
      });
    },

    async messages(caller: ChatCaller, conversationId: string, query: MessagesQuery): Promise<MessagePage> {
      await mustFind(caller, conversationId);
      const after = query.cursor ? decodeCursor(query.cursor) : null;
      const rows = await repo.pageMessages(db, caller.companyId, conversationId, query.order, after, query.limit);
      const page = rows.slice(0, query.limit);
      const last = page[page.length - 1];
      return {
        data: page.map(toMessage),
        next_cursor: rows.length > query.limit && last ? encodeCursor(last.seq) : null,
        limit: query.limit,
      };
    },

    /** Rates the conversation 1–5 (a second rating replaces the first); feeds customer_satisfaction. */
    async feedback(
      caller: ChatCaller,
      conversationId: string,
      rating: number,
      comment: string,
    ): Promise<{ feedback: Feedback; created: boolean }> {
      return db.transaction().execute(async (trx) => {
        const conversation = await repo.lockConversation(trx, caller.companyId, conversationId);
        if (!conversation || (caller.agentId && conversation.agent_id !== caller.agentId))
          throw AppErrors.notFound('Conversation', conversationId);
        const row = await repo.upsertFeedback(trx, caller.companyId, conversationId, rating, comment);
        if (conversation.support_query_id && deps.supportQueries) {
          await deps.supportQueries.recordSatisfaction(trx, {
            companyId: caller.companyId,
            queryId: conversation.support_query_id,
            rating,
          });
        }
        const feedback = {
          id: row.id,
          conversation_id: row.conversation_id,
          rating: row.rating,
          comment: row.comment,
          created_at: row.created_at.toISOString(),
          updated_at: row.updated_at.toISOString(),
        };
        return { feedback, created: row.created_at.getTime() === row.updated_at.getTime() };
      });
    },
  };
}

export type ConversationsService = ReturnType<typeof createConversationsService>;
