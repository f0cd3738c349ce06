/** SQL of the workflows module (Kysely). Every query is scoped to the company. */
import { sql } from 'kysely';
import type { Executor } from '../../db/database.js';
import type { WorkflowStep } from './workflows.tables.js';

export async function findWorkflow(db: Executor, companyId: string, id: string) {
  return db
    .selectFrom('workflows')
    .selectAll()
    .where('company_id', '=', companyId)
    .where('id', '=', id)
    .executeTakeFirst();
}

export type WorkflowRow = NonNullable<Awaited<ReturnType<typeof findWorkflow>>>;

export async function listWorkflows(db: Executor, companyId: string, skip: number, limit: number) {
  const [rows, count] = await Promise.all([
    db
      .selectFrom('workflows')
      .selectAll()
      .where('company_id', '=', companyId)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .offset(skip)
      .limit(limit)
      .execute(),
    db
      .selectFrom('workflows')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('company_id', '=', companyId)
      .executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(count.n) };
}

/** The columns a validated body may set, named one by one. */
export interface WorkflowSettings {
  name?: string;
  description?: string;
  steps?: WorkflowStep[];
  default_agent_id?: string;
  router?: string;
}

function settingColumns(values: WorkflowSettings) {
  return {
    name: values.name,
    description: values.description,
    steps: values.steps === undefined ? undefined : JSON.stringify(values.steps),
    default_agent_id: values.default_agent_id,
    router: values.router,
  };
}

export async function insertWorkflow(
  db: Executor,
  values: Required<Pick<WorkflowSettings, 'name' | 'steps' | 'default_agent_id'>> &
    WorkflowSettings & { company_id: string; created_by: string | null },
) {
  return db
    .insertInto('workflows')
    .values({
      ...settingColumns(values),
      name: values.name,
      steps: JSON.stringify(values.steps),
      default_agent_id: values.default_agent_id,
      company_id: values.company_id,
      created_by: values.created_by,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function updateWorkflow(db: Executor, companyId: string, id: string, values: WorkflowSettings) {
  return db
    .updateTable('workflows')
    .set({ ...settingColumns(values), updated_at: sql`now()` })
    .where('company_id', '=', companyId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

export async function deleteWorkflow(db: Executor, companyId: string, id: string): Promise<boolean> {
  const result = await db
    .deleteFrom('workflows')
    .where('company_id', '=', companyId)
    .where('id', '=', id)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** Locks the workflow row (delete waits for a deployment being created against it, and the reverse). */
export async function lockWorkflow(db: Executor, companyId: string, id: string) {
  return db
    .selectFrom('workflows')
    .select('id')
    .where('company_id', '=', companyId)
    .where('id', '=', id)
    .forUpdate()
    .executeTakeFirst();
}
