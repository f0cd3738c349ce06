/**
 * Who is calling. An API key belongs to a user acting in their active company; a chat token
 * belongs to a company (optionally bound to one agent). Services take the narrowed context
 * as their first parameter so tenancy is never optional.
 */
import type { Role } from '../lib/roles.js';

export interface UserCaller {
  kind: 'user';
  userId: string;
  email: string;
  /** The API key the request came with, or null for the console's session cookie. */
  apiKeyId: string | null;
  /** The console session the request came with, or null for an API key. */
  sessionId: string | null;
  /** The user's active company, or null when they belong to none. */
  companyId: string | null;
  role: Role | null;
}

export interface ChatCaller {
  kind: 'chat';
  /** The chat token; null for a turn a company member starts (a voice agent's spoken turn). */
  tokenId: string | null;
  companyId: string;
  agentId: string | null;
}

export type Caller = UserCaller | ChatCaller;

/** A user acting inside a company: what company-scoped services receive. */
export interface CompanyContext {
  userId: string;
  companyId: string;
  role: Role;
}

declare module 'fastify' {
  interface FastifyRequest {
    caller: Caller | null;
  }
}
