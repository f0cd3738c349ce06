/** Kysely types of the identity tables: users, their API keys and the companies' chat tokens. */
import type { Generated } from 'kysely';
import type { DefaultTimestamp, Timestamp } from '../../db/columns.js';

export interface UsersTable {
  id: Generated<string>;
  email: string;
  first_name: Generated<string>;
  last_name: Generated<string>;
  active_company_id: string | null;
  /** The company whose administrator created the user (POST /users); it may enroll them later. */
  created_in_company_id: Generated<string | null>;
  created_at: DefaultTimestamp;
  updated_at: DefaultTimestamp;
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

export interface IdentityTables {
  users: UsersTable;
  api_keys: ApiKeysTable;
  chat_tokens: ChatTokensTable;
}
