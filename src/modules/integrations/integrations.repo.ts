import { sql, type Insertable, type Updateable } from 'kysely';
import type { Executor } from '../../db/database.js';
import { statementShapes } from '../../db/statements.js';
import type { DiscoveredTool } from '../../ports/connectors.js';
import type { IntegrationsTable } from './integrations.tables.js';

/** The integration with this id in this company, or undefined. */
export async function findIntegration(db: Executor, companyId: string, id: string) {
  return db
    .selectFrom('integrations')
    .selectAll()
    .where('company_id', '=', companyId)
    .where('id', '=', id)
    .executeTakeFirst();
}

export type IntegrationRow = NonNullable<Awaited<ReturnType<typeof findIntegration>>>;

/** An agent's active integrations (compiled once per shape: with `integration_ids` or without). */
const activeForAgentStatement = statementShapes(
  (shape: 'linked' | 'linked or listed') => (db, p: { companyId: string; agentId: string; ids: readonly string[] }) =>
    db
      .selectFrom('integrations')
      .select(['id', 'company_id', 'type', 'name', 'config', 'discovered_tools'])
      .where('company_id', '=', p.companyId)
      .where('is_active', '=', sql<boolean>`true`)
      .where((eb) =>
        shape === 'linked or listed'
          ? eb.or([eb('agent_id', '=', p.agentId), eb('id', '=', eb.fn.any(eb.val(p.ids)))])
          : eb('agent_id', '=', p.agentId),
      )
      .orderBy('created_at')
      .orderBy('id'),
);

/** The active integrations of the agent: linked to it by their `agent_id`, or named in its `integration_ids`. */
export async function activeForAgent(
  db: Executor,
  companyId: string,
  agent: { id: string; integration_ids: readonly string[] },
) {
  const ids = agent.integration_ids;
  const result = await activeForAgentStatement(ids.length ? 'linked or listed' : 'linked').execute(db, {
    companyId,
    agentId: agent.id,
    ids,
  });
  return result.rows;
}

/** The columns a caller's input may reach, named one by one. */
export type IntegrationSettings = Pick<
  Updateable<IntegrationsTable>,
  'name' | 'config' | 'is_active' | 'visibility' | 'agent_id'
>;

function settingColumns(values: IntegrationSettings): IntegrationSettings {
  return {
    name: values.name,
    // jsonb: node-postgres would write a JS object as text of its own; send JSON text.
    config: values.config === undefined ? undefined : (JSON.stringify(values.config) as never),
    is_active: values.is_active,
    visibility: values.visibility,
    agent_id: values.agent_id,
  };
}

export async function insertIntegration(
  db: Executor,
  values: IntegrationSettings &
    Pick<Insertable<IntegrationsTable>, 'id' | 'company_id' | 'name' | 'type' | 'created_by'>,
) {
  return db
    .insertInto('integrations')
    .values({
      ...settingColumns(values),
      id: values.id,
      company_id: values.company_id,
      name: values.name,
      type: values.type,
      created_by: values.created_by,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function updateIntegration(db: Executor, companyId: string, id: string, values: IntegrationSettings) {
  return db
    .updateTable('integrations')
    .set({
      ...settingColumns(values),
      // Another config may reach another server: its tools are listed again by the next live check.
      ...(values.config === undefined ? {} : { discovered_tools: null }),
      updated_at: sql`now()`,
    })
    .where('company_id', '=', companyId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

export async function deleteIntegration(db: Executor, companyId: string, id: string): Promise<boolean> {
  const result = await db
    .deleteFrom('integrations')
    .where('company_id', '=', companyId)
    .where('id', '=', id)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** A page of the company's integrations, newest first (index integrations_company_page_idx). */
export async function listIntegrations(db: Executor, companyId: string, skip: number, limit: number) {
  return db
    .selectFrom('integrations')
    .selectAll()
    .where('company_id', '=', companyId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .offset(skip)
    .limit(limit)
    .execute();
}

/** Whether `agentId` is an agent of the company. */
export async function agentExists(db: Executor, companyId: string, agentId: string): Promise<boolean> {
  const row = await db
    .selectFrom('agents')
    .select('id')
    .where('company_id', '=', companyId)
    .where('id', '=', agentId)
    .executeTakeFirst();
  return row !== undefined;
}

/** The stored check value of the secret key, or undefined before the first start. */
export async function findKeyCheck(db: Executor): Promise<string | undefined> {
  const row = await db.selectFrom('secret_key_check').select('sealed').executeTakeFirst();
  return row?.sealed;
}

/** Stores the check value unless another instance stored one first (then that one counts). */
export async function insertKeyCheck(db: Executor, sealed: string): Promise<void> {
  await db
    .insertInto('secret_key_check')
    .values({ sealed })
    .onConflict((conflict) => conflict.column('id').doNothing())
    .execute();
}

/** Integrations of `type` whose config has the key `key` (any company): id, company and config, by id after `after`. */
export async function integrationsWithKey(db: Executor, type: string, key: string, after: string, limit: number) {
  return db
    .selectFrom('integrations')
    .select(['id', 'company_id', 'config'])
    .where('type', '=', type)
    .where(sql<boolean>`config ? ${key}`)
    .where('id', '>', after)
    .orderBy('id')
    .limit(limit)
    .execute();
}

/** Replaces a config only if it is still `expected` (a concurrent update wins). */
export async function replaceConfigIf(
  db: Executor,
  id: string,
  expected: Record<string, unknown>,
  config: Record<string, unknown>,
): Promise<boolean> {
  const result = await db
    .updateTable('integrations')
    .set({ config: JSON.stringify(config) as never })
    .where('id', '=', id)
    .where(sql<boolean>`config = ${JSON.stringify(expected)}::jsonb`)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Caches the tools the integration's server listed at a live check. */
export async function saveDiscoveredTools(
  db: Executor,
  companyId: string,
  id: string,
  tools: readonly DiscoveredTool[],
): Promise<void> {
  await db
    .updateTable('integrations')
    .set({ discovered_tools: JSON.stringify(tools) as never })
    .where('company_id', '=', companyId)
    .where('id', '=', id)
    .execute();
}
