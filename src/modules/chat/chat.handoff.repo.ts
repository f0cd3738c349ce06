/**
 * SQL of the hand-off (chat.handoff.ts): a conversation locked for a transition, its hand-off
 * columns moved, a person's message written with the counters, a reply's delivery outcome, and
 * the people a conversation may be assigned to (company members, read only).
 */
import { sql } from 'kysely';
import type { Executor } from '../../db/database.js';
import type { DeliveryStatus, Handler } from './chat.tables.js';

/** The conversation row, locked for the rest of the transaction (transitions of one conversation serialise). */
export async function lockConversation(db: Executor, companyId: string, conversationId: string) {
  return db
    .selectFrom('conversations')
    .selectAll()
    .where('company_id', '=', companyId)
    .where('id', '=', conversationId)
    .forUpdate()
    .executeTakeFirst();
}

export async function setHandler(
  db: Executor,
  companyId: string,
  conversationId: string,
  values: { handler: Handler; assigneeId: string | null; reason?: string | null; startedAt?: Date | null },
) {
  return db
    .updateTable('conversations')
    .set({
      handler: values.handler,
      assignee_id: values.assigneeId,
      ...(values.reason !== undefined ? { handoff_reason: values.reason } : {}),
      ...(values.startedAt !== undefined ? { handoff_at: values.startedAt } : {}),
      updated_at: sql`now()`,
    })
    .where('company_id', '=', companyId)
    .where('id', '=', conversationId)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** A turn escalated: the conversation waits for a person, unless a person already has it. */
export async function startHandoff(db: Executor, companyId: string, conversationId: string, reason: string) {
  return db
    .updateTable('conversations')
    .set({ handler: 'handoff', assignee_id: null, handoff_reason: reason, handoff_at: sql`now()` })
    .where('company_id', '=', companyId)
    .where('id', '=', conversationId)
    .where('handler', '=', 'bot')
    .where('status', '=', 'open')
    .returning(['id', 'handler', 'assignee_id', 'handoff_reason'])
    .executeTakeFirst();
}

export async function closeConversation(db: Executor, companyId: string, conversationId: string) {
  return db
    .updateTable('conversations')
    .set({ status: 'closed', closed_at: sql`now()`, updated_at: sql`now()` })
    .where('company_id', '=', companyId)
    .where('id', '=', conversationId)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** A message of the conversation (a person's reply, or the customer's during a hand-off) and the counters. */
export async function insertMessage(
  db: Executor,
  input: {
    companyId: string;
    conversationId: string;
    role: 'user' | 'human';
    content: string;
    authorId: string | null;
    deliveryStatus: DeliveryStatus | null;
  },
) {
  const row = await db
    .insertInto('conversation_messages')
    .values({
      company_id: input.companyId,
      conversation_id: input.conversationId,
      role: input.role,
      content: input.content,
      author_id: input.authorId,
      delivery_status: input.deliveryStatus,
    })
    .returning(['id', 'role', 'content', 'author_id', 'delivery_status', 'delivery_error', 'created_at'])
    .executeTakeFirstOrThrow();
  await db
    .updateTable('conversations')
    .set((eb) => ({ message_count: eb('message_count', '+', 1), last_message_at: sql`now()`, updated_at: sql`now()` }))
    .where('company_id', '=', input.companyId)
    .where('id', '=', input.conversationId)
    .execute();
  return row;
}

export type HandoffMessageRow = Awaited<ReturnType<typeof insertMessage>>;

export async function setDelivery(
  db: Executor,
  companyId: string,
  messageId: string,
  status: DeliveryStatus,
  error: string | null,
) {
  await db
    .updateTable('conversation_messages')
    .set({ delivery_status: status, delivery_error: error })
    .where('company_id', '=', companyId)
    .where('id', '=', messageId)
    .execute();
}

/** A member of the company: role and the name to show (companies' and identity's tables, read only). */
export async function findMember(db: Executor, companyId: string, userId: string) {
  return db
    .selectFrom('company_members as m')
    .innerJoin('users as u', 'u.id', 'm.user_id')
    .select(['m.role', 'u.first_name', 'u.last_name', 'u.email'])
    .where('m.company_id', '=', companyId)
    .where('m.user_id', '=', userId)
    .executeTakeFirst();
}
