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

/** The settings of an agent, the only columns a caller's input may reach. */
export type AgentSettings = Pick<
  Updateable<AgentsTable>,
  | 'title'
  | 'task_description'
  | 'instructions'
  | 'model'
  | 'temperature'
  | 'collection_ids'
  | 'integration_ids'
  | 'languages'
  | 'welcome_message'
  | 'escalation'
>;

/** Named one by one: whatever else `values` carries (an id, a company, a timestamp) is not written. */
function settingColumns(values: AgentSettings): AgentSettings {
  return {
    title: values.title,
    task_description: values.task_description,
    instructions: values.instructions,
    model: values.model,
    temperature: values.temperature,
    collection_ids: values.collection_ids,
    integration_ids: values.integration_ids,
    languages: values.languages,
    welcome_message: values.welcome_message,
    escalation: values.escalation,
  };
}

export async function insertAgent(
  db: Executor,
  values: AgentSettings & Pick<Insertable<AgentsTable>, 'company_id' | 'title' | 'created_by'>,
) {
  return db
    .insertInto('agents')
    .values({
      ...settingColumns(values),
      title: values.title,
      company_id: values.company_id,
      created_by: values.created_by,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function updateAgent(db: Executor, companyId: string, agentId: string, values: AgentSettings) {
  return db
    .updateTable('agents')
    .set({ ...settingColumns(values), updated_at: sql`now()` })
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
