/** Kysely types of the integrations tables: integrations and the secret key's check value. */
import type { Generated } from 'kysely';
import type { DefaultTimestamp } from '../../db/columns.js';
import type { DiscoveredTool } from '../../ports/connectors.js';

/** A company's connection to a third-party product (migration 0002); secrets in `config` are sealed. */
export interface IntegrationsTable {
  id: Generated<string>;
  company_id: string;
  name: string;
  type: string;
  config: Generated<Record<string, unknown>>;
  is_active: Generated<boolean>;
  visibility: Generated<'private' | 'public'>;
  agent_id: string | null;
  /** The tools the server listed at the last live check (migration 0190; MCP servers), null before. */
  discovered_tools: DiscoveredTool[] | null;
  created_by: string | null;
  created_at: DefaultTimestamp;
  updated_at: DefaultTimestamp;
}

/** One row: a known text sealed with the secret key, opened at start-up (migration 0050). */
export interface SecretKeyCheckTable {
  id: Generated<boolean>;
  sealed: string;
  created_at: DefaultTimestamp;
}

export interface IntegrationsTables {
  integrations: IntegrationsTable;
  secret_key_check: SecretKeyCheckTable;
}
