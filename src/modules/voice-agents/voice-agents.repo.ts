/** SQL of the voice agents module. Every function takes the executor first; tenancy is in SQL. */
import { sql, type Insertable, type Selectable, type Updateable } from 'kysely';
import type { Executor } from '../../db/database.js';
import { isPgError, PG_FOREIGN_KEY_VIOLATION } from '../../db/errors.js';
import { VoiceAgentErrors } from './voice-agents.errors.js';
import type { VoiceAgentsTable } from './voice-agents.tables.js';

export type VoiceAgentRow = Selectable<VoiceAgentsTable>;

/** The columns a caller's input may reach (never id, company, author or timestamps). */
export type VoiceAgentSettings = Pick<
  Updateable<VoiceAgentsTable>,
  | 'name'
  | 'description'
  | 'voice_id'
  | 'voice_name'
  | 'language'
  | 'model_id'
  | 'active'
  | 'temperature'
  | 'voice_speed'
  | 'voice_stability'
  | 'voice_similarity_boost'
  | 'voice_style'
  | 'output_format'
  | 'main_agent_id'
>;

const COLUMNS = [
  'id',
  'company_id',
  'name',
  'description',
  'voice_id',
  'voice_name',
  'language',
  'model_id',
  'active',
  'temperature',
  'voice_speed',
  'voice_stability',
  'voice_similarity_boost',
  'voice_style',
  'output_format',
  'main_agent_id',
  'created_by',
  'created_at',
  'updated_at',
] as const;

/** An agent deleted between the service's check and the write: the same 400 as an unknown one. */
function agentGone(error: unknown, agentId: string | null | undefined): never {
  if (isPgError(error, PG_FOREIGN_KEY_VIOLATION) && agentId) throw VoiceAgentErrors.unknownAgent(agentId);
  throw error;
}

/** A page of the company's voice agents, oldest first (index voice_agents_company_created_idx). */
export async function listVoiceAgents(
  db: Executor,
  companyId: string,
  skip: number,
  limit: number,
): Promise<VoiceAgentRow[]> {
  return db
    .selectFrom('voice_agents')
    .select(COLUMNS)
    .where('company_id', '=', companyId)
    .orderBy('created_at')
    .orderBy('id')
    .offset(skip)
    .limit(limit)
    .execute();
}

export async function findVoiceAgent(db: Executor, companyId: string, id: string): Promise<VoiceAgentRow | undefined> {
  return db
    .selectFrom('voice_agents')
    .select(COLUMNS)
    .where('company_id', '=', companyId)
    .where('id', '=', id)
    .executeTakeFirst();
}

/** The columns a request may set, named one by one: nothing else of `values` reaches SQL. */
function settingColumns(values: VoiceAgentSettings) {
  return {
    name: values.name,
    description: values.description,
    voice_id: values.voice_id,
    voice_name: values.voice_name,
    language: values.language,
    model_id: values.model_id,
    active: values.active,
    temperature: values.temperature,
    voice_speed: values.voice_speed,
    voice_stability: values.voice_stability,
    voice_similarity_boost: values.voice_similarity_boost,
    voice_style: values.voice_style,
    output_format: values.output_format,
    main_agent_id: values.main_agent_id,
  };
}

export async function insertVoiceAgent(
  db: Executor,
  companyId: string,
  createdBy: string | null,
  values: VoiceAgentSettings & Pick<Insertable<VoiceAgentsTable>, 'name' | 'voice_id'>,
): Promise<VoiceAgentRow> {
  return (
    db
      .insertInto('voice_agents')
      // name and voice_id are required on insert (optional in an update's settings).
      .values({
        ...settingColumns(values),
        name: values.name,
        voice_id: values.voice_id,
        company_id: companyId,
        created_by: createdBy,
      })
      .returning(COLUMNS)
      .executeTakeFirstOrThrow()
      .catch((error: unknown) => agentGone(error, values.main_agent_id))
  );
}

export async function updateVoiceAgent(
  db: Executor,
  companyId: string,
  id: string,
  values: VoiceAgentSettings,
): Promise<VoiceAgentRow | undefined> {
  return db
    .updateTable('voice_agents')
    .set({ ...settingColumns(values), updated_at: sql`now()` })
    .where('company_id', '=', companyId)
    .where('id', '=', id)
    .returning(COLUMNS)
    .executeTakeFirst()
    .catch((error: unknown) => agentGone(error, values.main_agent_id));
}

export async function deleteVoiceAgent(db: Executor, companyId: string, id: string): Promise<boolean> {
  const result = await db
    .deleteFrom('voice_agents')
    .where('company_id', '=', companyId)
    .where('id', '=', id)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}
