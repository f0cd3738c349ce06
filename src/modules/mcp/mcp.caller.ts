/**
 * Who an MCP session answers: the credential that opened it (an API key, or a chat token that may
 * be bound to one agent), the company it is scoped to, and the contexts the other modules' reads
 * and the chat turn take.
 */
import type { Caller, ChatCaller, CompanyContext } from '../../http/caller.js';
import { AppErrors } from '../../http/errors.js';

export interface McpCaller {
  /** The credential (`key:<id>`, `token:<id>`): a session answers the credential that opened it only. */
  owner: string;
  kind: 'api_key' | 'chat_token';
  companyId: string;
  /** A bound chat token's agent: the session sees that agent only. */
  agentId: string | null;
  /** The context of reads (knowledge, support queries): the key's user and role, or a reader of the token's company. */
  context: CompanyContext;
  /** The chat turn's caller (an API key's turn is the company's own, like a voice agent's). */
  chat: ChatCaller;
}

/** The caller of a token's reads: no user, the lowest role (every read the tools make is open to members). */
const NO_USER = '00000000-0000-0000-0000-000000000000';

export function mcpCallerOf(caller: Caller | null): McpCaller {
  if (caller?.kind === 'chat') {
    return {
      owner: `token:${caller.tokenId ?? 'none'}`,
      kind: 'chat_token',
      companyId: caller.companyId,
      agentId: caller.agentId,
      context: { userId: NO_USER, companyId: caller.companyId, role: 'member' },
      chat: caller,
    };
  }
  if (caller?.kind === 'user') {
    if (!caller.companyId || !caller.role)
      throw AppErrors.forbidden('No active company: create a company or accept an invitation first');
    return {
      owner: `key:${caller.apiKeyId ?? caller.sessionId ?? caller.userId}`,
      kind: 'api_key',
      companyId: caller.companyId,
      agentId: null,
      context: { userId: caller.userId, companyId: caller.companyId, role: caller.role },
      chat: { kind: 'chat', tokenId: null, companyId: caller.companyId, agentId: null },
    };
  }
  throw AppErrors.unauthorized('Missing Authorization header: send Authorization: Bearer <API key or chat token>');
}
