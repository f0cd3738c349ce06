/** SQL of a workflow hand-off: the conversation moves to the agent that answers now. */
import { sql } from 'kysely';
import type { Executor } from '../../db/database.js';

/**
 * Moves the workflow conversation from agent `from` to `to`: its support query's id, or null when
 * another turn moved it first.
 */
export async function handOffConversation(
  db: Executor,
  companyId: string,
  conversationId: string,
  from: string,
  to: string,
): Promise<{ previousQueryId: string | null } | null> {
  const before = await db
    .selectFrom('conversations')
    .select(['support_query_id'])
    .where('company_id', '=', companyId)
    .where('id', '=', conversationId)
    .where('agent_id', '=', from)
    .forUpdate()
    .executeTakeFirst();
  if (!before) return null;
  await db
    .updateTable('conversations')
    .set({ agent_id: to, updated_at: sql`now()` })
    .where('company_id', '=', companyId)
    .where('id', '=', conversationId)
    .execute();
  return { previousQueryId: before.support_query_id };
}
