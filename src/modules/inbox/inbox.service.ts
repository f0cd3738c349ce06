/**
 * The inbox (DESIGN §13): a company's conversations as people see them — who answers each
 * (`bot`, `handoff`, `assigned`, `closed`) — and what people do with them. Reads are here; every
 * transition goes through the chat module's hand-off (`chat.handoff`), which owns the
 * conversation's rows, its events and the delivery of replies. Roles are checked by the routes
 * (members read; developers and above act); tenancy is the caller's company in every query.
 */
import type { Db } from '../../db/database.js';
import type { CompanyContext } from '../../http/caller.js';
import { AppErrors } from '../../http/errors.js';
import type { PageOf } from '../../http/schemas.js';
import { inboxStatus, type ChatModule, type Person } from '../chat/index.js';
import * as repo from './inbox.repo.js';
import type {
  AssignBody,
  CloseBody,
  InboxConversation,
  InboxConversationDetail,
  InboxMessage,
  ListInboxQuery,
  ReplyBody,
} from './inbox.schemas.js';

const DETAIL_MESSAGES = 100;

type ConversationFields = Pick<
  repo.InboxRow,
  | 'id'
  | 'status'
  | 'handler'
  | 'channel'
  | 'agent_id'
  | 'assignee_id'
  | 'support_query_id'
  | 'external_user_id'
  | 'created_at'
  | 'updated_at'
>;

export function toInboxConversation(row: ConversationFields): InboxConversation {
  return {
    id: row.id,
    status: inboxStatus(row),
    channel: row.channel,
    agent_id: row.agent_id,
    assignee_id: row.assignee_id,
    support_query_id: row.support_query_id,
    user: row.external_user_id,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

function toInboxMessage(row: Awaited<ReturnType<typeof repo.latestMessages>>[number]): InboxMessage {
  return {
    id: row.id,
    role: row.role,
    content: row.content,
    author_id: row.author_id,
    delivery_status: row.delivery_status,
    delivery_error: row.delivery_error,
    created_at: row.created_at.toISOString(),
  };
}

const person = (context: CompanyContext): Person => ({ companyId: context.companyId, userId: context.userId });

export function createInboxService(deps: { db: Db; chat: Pick<ChatModule, 'handoff' | 'events'> }) {
  const { db, chat } = deps;

  return {
    events: chat.events,

    async list(context: CompanyContext, query: ListInboxQuery): Promise<PageOf<InboxConversation>> {
      const { rows, total } = await repo.listConversations(db, context.companyId, query);
      return { data: rows.map(toInboxConversation), total, skip: query.skip, limit: query.limit };
    },

    async get(context: CompanyContext, conversationId: string): Promise<InboxConversationDetail> {
      const [row, messages] = await Promise.all([
        repo.findConversation(db, context.companyId, conversationId),
        repo.latestMessages(db, context.companyId, conversationId, DETAIL_MESSAGES),
      ]);
      if (!row) throw AppErrors.notFound('Conversation', conversationId);
      return {
        ...toInboxConversation(row),
        title: row.title,
        handoff_reason: row.handoff_reason,
        message_count: row.message_count,
        messages: messages.map(toInboxMessage),
      };
    },

    /** The current state of one conversation of the company (404 otherwise): the events stream's check. */
    async mustExist(context: CompanyContext, conversationId: string) {
      const row = await repo.findConversation(db, context.companyId, conversationId);
      if (!row) throw AppErrors.notFound('Conversation', conversationId);
      return row;
    },

    async assign(context: CompanyContext, conversationId: string, body: AssignBody) {
      return toInboxConversation(await chat.handoff.assign(person(context), conversationId, body.assignee_id));
    },

    async takeover(context: CompanyContext, conversationId: string) {
      return toInboxConversation(await chat.handoff.takeover(person(context), conversationId));
    },

    async release(context: CompanyContext, conversationId: string) {
      return toInboxConversation(await chat.handoff.release(person(context), conversationId));
    },

    async close(context: CompanyContext, conversationId: string, body: CloseBody) {
      const resolution = body.resolution?.trim();
      return toInboxConversation(
        await chat.handoff.close(person(context), conversationId, resolution ? resolution : undefined),
      );
    },

    async reply(context: CompanyContext, conversationId: string, body: ReplyBody) {
      const content = body.content.trim();
      if (!content) throw AppErrors.validation("Invalid field 'content': must not be empty or only spaces");
      const message = await chat.handoff.reply(person(context), conversationId, content);
      return {
        id: message.id,
        role: 'human' as const,
        content: message.content,
        author_id: context.userId,
        created_at: message.created_at.toISOString(),
        delivery_status: message.delivery_status ?? 'delivered',
        delivery_error: message.delivery_error,
      };
    },
  };
}

export type InboxService = ReturnType<typeof createInboxService>;
