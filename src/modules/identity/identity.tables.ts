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

/** A user's password (scrypt, PHC string) and the lock-out that failed sign-ins earn. */
export interface UserPasswordsTable {
  user_id: string;
  password_hash: string;
  failed_attempts: Generated<number>;
  locked_until: Timestamp | null;
  changed_at: DefaultTimestamp;
}

/** A signed-in browser: only the SHA-256 of the cookie's session id is stored. */
export interface UserSessionsTable {
  id: Generated<string>;
  user_id: string;
  id_hash: Buffer;
  user_agent: Generated<string>;
  created_at: DefaultTimestamp;
  last_seen_at: DefaultTimestamp;
  expires_at: Timestamp;
  revoked_at: Timestamp | null;
}

/** A single-use link that sets a password: a reset by e-mail, or the bootstrap owner's first sign-in. */
export interface PasswordLinksTable {
  id: Generated<string>;
  user_id: string;
  purpose: 'reset' | 'first_sign_in';
  token_hash: Buffer;
  expires_at: Timestamp;
  used_at: Timestamp | null;
  created_at: DefaultTimestamp;
}

export interface IdentityTables {
  users: UsersTable;
  api_keys: ApiKeysTable;
  chat_tokens: ChatTokensTable;
  user_passwords: UserPasswordsTable;
  user_sessions: UserSessionsTable;
  password_links: PasswordLinksTable;
}
