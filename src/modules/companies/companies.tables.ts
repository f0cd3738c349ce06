/** Kysely types of the companies tables (migrations/0001_kernel.sql and later). */
import type { Generated } from 'kysely';
import type { DefaultTimestamp, Timestamp } from '../../db/columns.js';
import type { Role } from '../../lib/roles.js';

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

export interface CompaniesTables {
  companies: CompaniesTable;
  company_members: CompanyMembersTable;
  company_invitations: CompanyInvitationsTable;
}
