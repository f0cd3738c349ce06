/**
 * Kysely table types, kept in step with migrations/ by hand (one interface per table).
 * Generated<> marks columns with a database default.
 */
import type { ColumnType, Generated } from 'kysely';
import type { DeploymentsTables } from '../modules/deployments/deployments.tables.js';
import type { ChatTables } from '../modules/chat/chat.tables.js';
import type { SupportTables } from '../modules/support-queries/support-queries.tables.js';
import type { NotificationTables } from '../modules/team-notifications/team-notifications.tables.js';
import type { KnowledgeTables } from '../modules/knowledge/knowledge.tables.js';

/** A timestamptz column: read as Date, written as Date or ISO string. */
export type Timestamp = ColumnType<Date, Date | string, Date | string>;
/** A timestamptz column with a database default (optional on insert). */
export type DefaultTimestamp = ColumnType<Date, Date | string | undefined, Date | string>;
export type Role = 'owner' | 'admin' | 'developer' | 'member';

export interface CompaniesTable {
  id: Generated<string>;
  name: string;
  industry: string | null;
  contact_email: string | null;
  contact_phone: string | null;
  address: string | null;
  website: string | null;
  working_hours: string | null;
  created_at: DefaultTimestamp;
  updated_at: DefaultTimestamp;
}

export interface UsersTable {
  id: Generated<string>;
  email: string;
  first_name: Generated<string>;
  last_name: Generated<string>;
  active_company_id: string | null;
  created_at: DefaultTimestamp;
  updated_at: DefaultTimestamp;
}

export interface CompanyMembersTable {
  id: Generated<string>;
  company_id: string;
  user_id: string;
  role: Role;
  joined_at: DefaultTimestamp;
}

export interface CompanyInvitationsTable {
  id: Generated<string>;
  company_id: string;
  email: string;
  role: Role;
  message: Generated<string>;
  status: Generated<'pending' | 'accepted' | 'expired' | 'revoked'>;
  token_hash: Buffer;
  token_hint: string;
  invited_by: string | null;
  accepted_by: string | null;
  accepted_at: Timestamp | null;
  expires_at: Timestamp;
  created_at: DefaultTimestamp;
}

export interface ApiKeysTable {
  id: Generated<string>;
  user_id: string;
  name: Generated<string>;
  key_hash: Buffer;
  key_hint: string;
  created_at: DefaultTimestamp;
  revoked_at: Timestamp | null;
}

export interface ChatTokensTable {
  id: Generated<string>;
  company_id: string;
  agent_id: string | null;
  name: Generated<string>;
  token_hash: Buffer;
  token_hint: string;
  created_by: string | null;
  created_at: DefaultTimestamp;
  revoked_at: Timestamp | null;
}

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
  created_by: string | null;
  created_at: DefaultTimestamp;
  updated_at: DefaultTimestamp;
}

export interface EmailOutboxTable {
  id: Generated<string>;
  company_id: string | null;
  recipient: string;
  subject: string;
  body_text: string;
  kind: string;
  error: string | null;
  created_at: DefaultTimestamp;
}

export interface IntegrationsTable {
  id: Generated<string>;
  company_id: string;
  name: string;
  type: string;
  config: Generated<Record<string, unknown>>;
  is_active: Generated<boolean>;
  visibility: Generated<'private' | 'public'>;
  agent_id: string | null;
  created_by: string | null;
  created_at: DefaultTimestamp;
  updated_at: DefaultTimestamp;
}

/**
 * Every table of the database. A module with tables of its own declares them in
 * src/modules/<module>/<module>.tables.ts and adds that interface to the `extends` list.
 */
export interface Database extends KnowledgeTables, SupportTables, NotificationTables, ChatTables, DeploymentsTables {
  companies: CompaniesTable;
  users: UsersTable;
  company_members: CompanyMembersTable;
  company_invitations: CompanyInvitationsTable;
  api_keys: ApiKeysTable;
  chat_tokens: ChatTokensTable;
  regions: RegionsTable;
  agents: AgentsTable;
  email_outbox: EmailOutboxTable;
  integrations: IntegrationsTable;
}
