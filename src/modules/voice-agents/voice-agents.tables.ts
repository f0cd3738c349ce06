/** Kysely types of the voice agents table (migrations/0060_create_voice_agents.sql). */
import type { Generated } from 'kysely';
import type { DefaultTimestamp } from '../../db/columns.js';

export interface VoiceAgentsTable {
  id: Generated<string>;
  company_id: string;
  name: string;
  description: Generated<string>;
  voice_id: string;
  voice_name: Generated<string>;
  language: Generated<string>;
  model_id: Generated<string>;
  active: Generated<boolean>;
  temperature: Generated<number>;
  voice_speed: Generated<number>;
  voice_stability: Generated<number>;
  voice_similarity_boost: Generated<number>;
  voice_style: Generated<number>;
  output_format: Generated<string>;
  main_agent_id: string | null;
  created_by: string | null;
  created_at: DefaultTimestamp;
  updated_at: DefaultTimestamp;
}

export interface VoiceAgentsTables {
  voice_agents: VoiceAgentsTable;
}
