/** Kysely types of the agents tables: agents and the regions they are deployed to. */
import type { Generated } from 'kysely';
import type { DefaultTimestamp } from '../../db/columns.js';

export interface RegionsTable {
  id: string;
  slug: string;
  name: string;
  created_at: DefaultTimestamp;
}

export interface AgentsTable {
  id: Generated<string>;
  company_id: string;
  title: string;
  task_description: Generated<string>;
  instructions: Generated<string>;
  model: Generated<string>;
  temperature: Generated<number>;
  collection_ids: Generated<string[]>;
  integration_ids: Generated<string[]>;
  languages: Generated<string>;
  welcome_message: Generated<string>;
  escalation: Generated<Record<string, unknown>>;
  tool_rules: Generated<Record<string, unknown>>;
  created_by: string | null;
  created_at: DefaultTimestamp;
  updated_at: DefaultTimestamp;
}

export interface AgentsTables {
  regions: RegionsTable;
  agents: AgentsTable;
}
