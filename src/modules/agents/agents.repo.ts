import { sql, type Insertable, type Updateable } from 'kysely';
import type { Executor } from '../../db/database.js';
import type { AgentsTable } from './agents.tables.js';

/** The agent with this id in this company, or undefined. */
export async function findAgent(db: Executor, companyId: string, agentId: string) {
  return db
    .selectFrom('agents')
    .selectAll()
    .where('company_id', '=', companyId)
    .where('id', '=', agentId)
    .executeTakeFirst();
}

export type AgentRow = NonNullable<Awaited<ReturnType<typeof findAgent>>>;

export async function insertAgent(db: Executor, values: Insertable<AgentsTable>) {
  return db.insertInto('agents').values(values).returningAll().executeTakeFirstOrThrow();
}

export async function updateAgent(db: Executor, companyId: string, agentId: string, values: Updateable<AgentsTable>) {
  return db
    .updateTable('agents')
    .set({ ...values, updated_at: sql`now()` })
    .where('company_id', '=', companyId)
    .where('id', '=', agentId)
    .returningAll()
    .executeTakeFirst();
}

export async function deleteAgent(db: Executor, companyId: string, agentId: string): Promise<boolean> {
  const result = await db
    .deleteFrom('agents')
    .where('company_id', '=', companyId)
    .where('id', '=', agentId)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

export async function listAgents(db: Executor, companyId: string, skip: number, limit: number) {
  const base = db.selectFrom('agents').where('company_id', '=', companyId);
  const [rows, count] = await Promise.all([
    base.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').offset(skip).limit(limit).execute(),
    base.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: count.total };
}

/** Ids among `ids` that are not integrations of the company. */
export async function missingIntegrations(db: Executor, companyId: string, ids: string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const rows = await db
    .selectFrom('integrations')
    .select('id')
    .where('company_id', '=', companyId)
    .where('id', 'in', ids)
    .execute();
  const found = new Set(rows.map((row) => row.id));
  return ids.filter((id) => !found.has(id));
}

export async function listRegions(db: Executor) {
  return db.selectFrom('regions').selectAll().orderBy('slug').execute();
}

export async function findRegionBySlug(db: Executor, slug: string) {
  return db.selectFrom('regions').selectAll().where('slug', '=', slug).executeTakeFirst();
}
