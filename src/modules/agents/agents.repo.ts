import { sql, type Insertable, type RawBuilder, type Updateable } from 'kysely';
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
  | 'tool_rules'
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
    tool_rules: values.tool_rules,
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

/**
 * One page of the company's agents, newest first, with the company's total, in one statement;
 * `counters` (a lateral subquery on `a`, the performance port's) adds each agent's figures as
 * columns of the row. The total comes with the rows; a page past the end asks for it apart.
 */
export async function listAgents(
  db: Executor,
  companyId: string,
  skip: number,
  limit: number,
  counters: RawBuilder<unknown> | null = null,
) {
  const base = db
    .selectFrom('agents as a')
    .selectAll('a')
    .select(sql<number>`(select count(*) from agents t where t.company_id = ${companyId})`.as('total'))
    .where('a.company_id', '=', companyId)
    .orderBy('a.created_at', 'desc')
    .orderBy('a.id', 'desc')
    .offset(skip)
    .limit(limit);
  const rows = counters
    ? ((await base
        .leftJoinLateral(counters.as('m'), (join) => join.onTrue())
        .select(sql<Record<string, unknown>>`to_jsonb(m)`.as('counters'))
        .execute()) as (AgentRow & { total: number; counters: Record<string, unknown> | null })[])
    : ((await base.execute()) as (AgentRow & { total: number; counters?: undefined })[]);
  if (rows.length > 0) return { rows, total: rows[0]!.total };
  const count = await db
    .selectFrom('agents')
    .select((eb) => eb.fn.countAll<number>().as('total'))
    .where('company_id', '=', companyId)
    .executeTakeFirstOrThrow();
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
