import { sql, type Insertable } from 'kysely';
import type { Executor } from '../../db/database.js';
import type { Citation, ConversationsTable } from './chat.tables.js';

/** Columns named one by one (a turn sets the id and times itself; nothing else is passed through). */
export async function insertConversation(db: Executor, values: Insertable<ConversationsTable>) {
  return db
    .insertInto('conversations')
    .values({
      id: values.id,
      company_id: values.company_id,
      agent_id: values.agent_id,
      deployment_id: values.deployment_id,
      chat_token_id: values.chat_token_id,
      title: values.title,
      status: values.status,
      external_user_id: values.external_user_id,
      end_user_id: values.end_user_id,
      support_query_id: values.support_query_id,
      workflow_id: values.workflow_id,
      channel: values.channel,
      region: values.region,
      last_message_at: values.last_message_at,
      closed_at: values.closed_at,
      created_at: values.created_at,
      updated_at: values.updated_at,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export type ConversationRow = Awaited<ReturnType<typeof insertConversation>>;

/** A conversation of the company (and of `agentId` when the token is bound to one). */
export async function findConversation(
  db: Executor,
  companyId: string,
  conversationId: string,
  agentId: string | null,
) {
  let query = db
    .selectFrom('conversations')
    .selectAll()
    .where('company_id', '=', companyId)
    .where('id', '=', conversationId);
  if (agentId) query = query.where('agent_id', '=', agentId);
  return query.executeTakeFirst();
}

export interface ConversationFilter {
  agentId?: string | undefined;
  user?: string | undefined;
  status?: 'open' | 'closed' | undefined;
}

export async function listConversations(
  db: Executor,
  companyId: string,
  filter: ConversationFilter,
  skip: number,
  limit: number,
) {
  let base = db.selectFrom('conversations').where('company_id', '=', companyId);
  if (filter.agentId) base = base.where('agent_id', '=', filter.agentId);
  if (filter.user) base = base.where('external_user_id', '=', filter.user);
  if (filter.status) base = base.where('status', '=', filter.status);
  const [rows, count] = await Promise.all([
    base.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').offset(skip).limit(limit).execute(),
    base.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: count.total };
}

export async function updateConversation(
  db: Executor,
  companyId: string,
  conversationId: string,
  values: {
    title?: string;
    status?: 'open' | 'closed';
    closed_at?: Date;
    support_query_id?: string;
    end_user_id?: string;
  },
) {
  return db
    .updateTable('conversations')
    .set({
      title: values.title,
      status: values.status,
      closed_at: values.closed_at,
      support_query_id: values.support_query_id,
      end_user_id: values.end_user_id,
      updated_at: sql`now()`,
    })
    .where('company_id', '=', companyId)
    .where('id', '=', conversationId)
    .returningAll()
    .executeTakeFirst();
}

/** Locks the conversation row for the turn being written (turns of one conversation serialise). */
export async function lockConversation(db: Executor, companyId: string, conversationId: string) {
  return db
    .selectFrom('conversations')
    .selectAll()
    .where('company_id', '=', companyId)
    .where('id', '=', conversationId)
    .forUpdate()
    .executeTakeFirst();
}

export interface NewMessage {
  /** Made by the caller when it must be known before the insert (a streamed turn's answer). */
  id?: string;
  role: 'user' | 'assistant';
  content: string;
  citations?: Citation[];
  /** The turn's tool calls (an assistant message). */
  toolCalls?: object[];
  model?: string | null;
  was_resolved?: boolean | null;
  response_time_ms?: number | null;
  finish_reason?: 'stop' | 'aborted' | 'error' | null;
}

/** Appends messages in order and moves the conversation's counters in the same statement pair. */
export async function appendMessages(db: Executor, companyId: string, conversationId: string, messages: NewMessage[]) {
  const rows = await db
    .insertInto('conversation_messages')
    .values(
      messages.map((message) => ({
        ...(message.id ? { id: message.id } : {}),
        company_id: companyId,
        conversation_id: conversationId,
        role: message.role,
        content: message.content,
        citations: JSON.stringify(message.citations ?? []),
        tool_calls: JSON.stringify(message.toolCalls ?? []),
        model: message.model ?? null,
        was_resolved: message.was_resolved ?? null,
        response_time_ms: message.response_time_ms ?? null,
        finish_reason: message.finish_reason ?? null,
      })),
    )
    .returningAll()
    .execute();
  await db
    .updateTable('conversations')
    .set((eb) => ({
      message_count: eb('message_count', '+', messages.length),
      last_message_at: sql`now()`,
      updated_at: sql`now()`,
    }))
    .where('company_id', '=', companyId)
    .where('id', '=', conversationId)
    .execute();
  return rows;
}

export type MessageRow = Awaited<ReturnType<typeof appendMessages>>[number];

/** An assistant message of the company (and of `agentId`'s conversations when given): a streamed turn's stored answer. */
export async function findAnswer(db: Executor, companyId: string, messageId: string, agentId: string | null) {
  let query = db
    .selectFrom('conversation_messages as m')
    .innerJoin('conversations as c', 'c.id', 'm.conversation_id')
    .select([
      'm.id',
      'm.conversation_id',
      'm.content',
      'm.citations',
      'm.was_resolved',
      'm.response_time_ms',
      'm.finish_reason',
    ])
    .where('m.company_id', '=', companyId)
    .where('c.company_id', '=', companyId)
    .where('m.id', '=', messageId)
    .where('m.role', '=', 'assistant');
  if (agentId) query = query.where('c.agent_id', '=', agentId);
  return query.executeTakeFirst();
}

export type AnswerRow = NonNullable<Awaited<ReturnType<typeof findAnswer>>>;

/** The last `limit` messages, oldest first (the model's history). */
export async function recentMessages(db: Executor, companyId: string, conversationId: string, limit: number) {
  if (limit === 0) return [];
  const rows = await db
    .selectFrom('conversation_messages')
    .select(['role', 'content'])
    .where('company_id', '=', companyId)
    .where('conversation_id', '=', conversationId)
    .orderBy('seq', 'desc')
    .limit(limit)
    .execute();
  return rows.reverse();
}

/** One page of messages after (asc) or before (desc) the cursor's sequence number. */
export async function pageMessages(
  db: Executor,
  companyId: string,
  conversationId: string,
  order: 'asc' | 'desc',
  afterSeq: number | null,
  limit: number,
) {
  let query = db
    .selectFrom('conversation_messages')
    .selectAll()
    .where('company_id', '=', companyId)
    .where('conversation_id', '=', conversationId);
  if (afterSeq !== null) query = query.where('seq', order === 'asc' ? '>' : '<', afterSeq);
  return query
    .orderBy('seq', order)
    .limit(limit + 1)
    .execute();
}

export async function upsertFeedback(
  db: Executor,
  companyId: string,
  conversationId: string,
  rating: number,
  comment: string,
) {
  return db
    .insertInto('conversation_feedback')
    .values({ company_id: companyId, conversation_id: conversationId, rating, comment })
    .onConflict((oc) => oc.column('conversation_id').doUpdateSet({ rating, comment, updated_at: sql`now()` }))
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function findFeedback(db: Executor, companyId: string, conversationId: string) {
  return db
    .selectFrom('conversation_feedback')
    .select(['rating'])
    .where('company_id', '=', companyId)
    .where('conversation_id', '=', conversationId)
    .executeTakeFirst();
}

/** Whether the deployment exists in the company for this agent (the deployments module's table, read only). */
export async function deploymentExists(
  db: Executor,
  companyId: string,
  deploymentId: string,
  agentId: string,
): Promise<boolean> {
  const row = await db
    .selectFrom('deployments')
    .select('id')
    .where('id', '=', deploymentId)
    .where('company_id', '=', companyId)
    .where('agent_id', '=', agentId)
    .executeTakeFirst();
  return row !== undefined;
}
