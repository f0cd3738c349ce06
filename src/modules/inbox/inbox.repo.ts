/**
 * The inbox's reads over the chat module's conversations (read only: the chat module's hand-off
 * writes them): a page with filters and text search, one conversation, its latest messages.
 */
import { sql, type ExpressionBuilder } from 'kysely';
import type { Executor } from '../../db/database.js';
import type { Database } from '../../db/schema.js';
import type { ListInboxQuery } from './inbox.schemas.js';

const COLUMNS = [
  'c.id',
  'c.company_id',
  'c.status',
  'c.handler',
  'c.channel',
  'c.agent_id',
  'c.assignee_id',
  'c.support_query_id',
  'c.external_user_id',
  'c.title',
  'c.handoff_reason',
  'c.message_count',
  'c.created_at',
  'c.updated_at',
] as const;

/** `%text%` for ILIKE, the pattern characters of the text taken literally. */
function contains(text: string): string {
  return `%${text.replace(/[\\%_]/g, (char) => `\\${char}`)}%`;
}

export async function listConversations(db: Executor, companyId: string, query: ListInboxQuery) {
  let base = db.selectFrom('conversations as c').where('c.company_id', '=', companyId);
  if (query.status === 'closed') base = base.where('c.status', '=', 'closed');
  else if (query.status) base = base.where('c.status', '=', 'open').where('c.handler', '=', query.status);
  if (query.channel) base = base.where('c.channel', '=', query.channel);
  if (query.agent_id) base = base.where('c.agent_id', '=', query.agent_id);
  if (query.assignee_id) base = base.where('c.assignee_id', '=', query.assignee_id);
  if (query.q) {
    const pattern = contains(query.q);
    base = base.where((eb: ExpressionBuilder<Database & { c: Database['conversations'] }, 'c'>) =>
      eb.or([
        eb('c.title', 'ilike', pattern),
        eb('c.external_user_id', 'ilike', pattern),
        eb.exists(
          eb
            .selectFrom('conversation_messages as m')
            .select(sql`1`.as('one'))
            .whereRef('m.conversation_id', '=', 'c.id')
            .where('m.company_id', '=', companyId)
            .where('m.content', 'ilike', pattern),
        ),
      ]),
    );
  }
  const [rows, count] = await Promise.all([
    base
      .select(COLUMNS)
      .orderBy('c.created_at', 'desc')
      .orderBy('c.id', 'desc')
      .offset(query.skip)
      .limit(query.limit)
      .execute(),
    base.select((eb) => eb.fn.countAll<string>().as('total')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(count.total) };
}

export type InboxRow = Awaited<ReturnType<typeof listConversations>>['rows'][number];

export async function findConversation(db: Executor, companyId: string, conversationId: string) {
  return db
    .selectFrom('conversations as c')
    .select(COLUMNS)
    .where('c.company_id', '=', companyId)
    .where('c.id', '=', conversationId)
    .executeTakeFirst();
}

/** The latest `limit` messages, oldest first. */
export async function latestMessages(db: Executor, companyId: string, conversationId: string, limit: number) {
  const rows = await db
    .selectFrom('conversation_messages')
    .select(['id', 'role', 'content', 'author_id', 'delivery_status', 'delivery_error', 'created_at'])
    .where('company_id', '=', companyId)
    .where('conversation_id', '=', conversationId)
    .orderBy('seq', 'desc')
    .limit(limit)
    .execute();
  return rows.reverse();
}
