/**
 * Users and credentials: authentication of API keys and chat tokens, the caller's profile,
 * users created by admins, the caller's own API keys and the company's chat tokens.
 */
import type { Db, Executor } from '../../db/database.js';
import type { ChatCaller, CompanyContext, UserCaller } from '../../http/caller.js';
import { AppErrors } from '../../http/errors.js';
import type { PageOf } from '../../http/schemas.js';
import type { CoherentCache } from '../../lib/coherent-cache.js';
import type { Role } from '../../lib/roles.js';
import { generateSecret, hashSecret, sameHash, secretHint } from '../../lib/secrets.js';
import { findAgent } from '../agents/index.js';
import { listMemberships, setActiveCompany, type CompaniesService } from '../companies/index.js';
import * as repo from './identity.repo.js';
import type { ApiKey, ChatToken, CreatedApiKey, CreatedChatToken, Me, User } from './identity.schemas.js';

export interface IdentityDeps {
  db: Db;
  companies: Pick<CompaniesService, 'addMemberWithin'>;
  callers: CoherentCache<UserCaller | ChatCaller>;
}

type UserRow = NonNullable<Awaited<ReturnType<typeof repo.findUser>>>;

export function toUser(row: Pick<UserRow, 'id' | 'email' | 'first_name' | 'last_name' | 'created_at'>): User {
  return {
    id: row.id,
    email: row.email,
    first_name: row.first_name,
    last_name: row.last_name,
    created_at: row.created_at.toISOString(),
  };
}

function toApiKey(row: { id: string; name: string; key_hint: string; created_at: Date }): ApiKey {
  return { id: row.id, name: row.name, hint: row.key_hint, created_at: row.created_at.toISOString() };
}

function toChatToken(row: {
  id: string;
  name: string;
  agent_id: string | null;
  token_hint: string;
  created_by: string | null;
  created_at: Date;
}): ChatToken {
  return {
    id: row.id,
    name: row.name,
    agent_id: row.agent_id,
    hint: row.token_hint,
    created_by: row.created_by,
    created_at: row.created_at.toISOString(),
  };
}

/** Splits "Ada Lovelace" into first and last name when they were not given apart. */
function names(input: { name?: string; first_name?: string; last_name?: string }) {
  if (input.first_name !== undefined || input.last_name !== undefined || !input.name) {
    return { first_name: input.first_name ?? '', last_name: input.last_name ?? '' };
  }
  const [first, ...rest] = input.name.trim().split(/\s+/);
  return { first_name: first ?? '', last_name: rest.join(' ') };
}

export function createIdentityService(deps: IdentityDeps) {
  const { db, callers } = deps;

  async function newApiKey(executor: Executor, userId: string, name: string, secret?: string): Promise<CreatedApiKey> {
    const key = secret ?? generateSecret('sk_');
    const row = await repo.insertApiKey(executor, {
      user_id: userId,
      name,
      key_hash: hashSecret(key),
      key_hint: secretHint(key),
    });
    return { ...toApiKey(row), key };
  }

  return {
    async authenticateApiKey(secret: string): Promise<UserCaller | null> {
      const hash = hashSecret(secret);
      const cacheKey = `k:${hash.toString('base64')}`;
      const cached = callers.get(cacheKey);
      if (cached?.kind === 'user') return cached;
      const generation = callers.generation;
      const row = await repo.findApiKeyCaller(db, hash);
      if (!row || !sameHash(row.key_hash, hash)) return null;
      const caller: UserCaller = {
        kind: 'user',
        userId: row.user_id,
        email: row.email,
        apiKeyId: row.api_key_id,
        sessionId: null,
        companyId: row.company_id ?? null,
        role: row.role ?? null,
      };
      callers.set(cacheKey, caller, generation);
      return caller;
    },

    async authenticateChatToken(secret: string): Promise<ChatCaller | null> {
      const hash = hashSecret(secret);
      const cacheKey = `t:${hash.toString('base64')}`;
      const cached = callers.get(cacheKey);
      if (cached?.kind === 'chat') return cached;
      const generation = callers.generation;
      const row = await repo.findChatTokenCaller(db, hash);
      if (!row || !sameHash(row.token_hash, hash)) return null;
      const caller: ChatCaller = { kind: 'chat', tokenId: row.id, companyId: row.company_id, agentId: row.agent_id };
      callers.set(cacheKey, caller, generation);
      return caller;
    },

    async me(caller: UserCaller): Promise<Me> {
      const [user, memberships] = await Promise.all([
        repo.findUser(db, caller.userId),
        listMemberships(db, caller.userId),
      ]);
      if (!user) throw AppErrors.notFound('User');
      return {
        ...toUser(user),
        active_company_id: caller.companyId,
        role: caller.role,
        memberships: memberships.map((m) => ({
          id: m.id,
          company_id: m.company_id,
          company_name: m.company_name,
          role: m.role,
          joined_at: m.joined_at.toISOString(),
        })),
      };
    },

    /** An admin creates a user, optionally as a member of the admin's company, with a first key. */
    async createUser(
      context: CompanyContext,
      input: { email: string; name?: string; first_name?: string; last_name?: string; role?: Role },
    ) {
      if (input.role === 'owner' && context.role !== 'owner') {
        throw AppErrors.forbidden('Only an owner can create another owner');
      }
      return db
        .transaction()
        .execute(async (trx) => {
          const user = await repo.insertUser(trx, {
            email: input.email.toLowerCase(),
            ...names(input),
            created_in_company_id: context.companyId,
          });
          let member = null;
          if (input.role) {
            member = await deps.companies.addMemberWithin(trx, context, user.id, input.role);
            await setActiveCompany(trx, user.id, context.companyId);
          }
          const apiKey = await newApiKey(trx, user.id, 'first key');
          return { user: toUser(user), member, api_key: apiKey };
        })
        .finally(() => callers.clear());
    },

    async listApiKeys(caller: UserCaller, skip: number, limit: number): Promise<PageOf<ApiKey>> {
      const { rows, total } = await repo.listApiKeys(db, caller.userId, skip, limit);
      return { data: rows.map(toApiKey), total, skip, limit };
    },

    async createApiKey(caller: UserCaller, name: string): Promise<CreatedApiKey> {
      return newApiKey(db, caller.userId, name);
    },

    /** Creates the bootstrap key with a known value (BOOTSTRAP_API_KEY) or a random one. */
    newApiKey,

    async revokeApiKey(caller: UserCaller, keyId: string): Promise<void> {
      const revoked = await repo.revokeApiKey(db, caller.userId, keyId);
      callers.clear();
      if (!revoked) throw AppErrors.notFound('API key', keyId);
    },

    async listChatTokens(context: CompanyContext, skip: number, limit: number): Promise<PageOf<ChatToken>> {
      const { rows, total } = await repo.listChatTokens(db, context.companyId, skip, limit);
      return { data: rows.map(toChatToken), total, skip, limit };
    },

    async createChatToken(
      context: CompanyContext,
      input: { name?: string; agent_id?: string | null },
      secret?: string,
    ): Promise<CreatedChatToken> {
      const agentId = input.agent_id ?? null;
      if (agentId && !(await findAgent(db, context.companyId, agentId))) throw AppErrors.notFound('Agent', agentId);
      const token = secret ?? generateSecret('ct_');
      const row = await repo.insertChatToken(db, {
        company_id: context.companyId,
        agent_id: agentId,
        name: input.name ?? '',
        token_hash: hashSecret(token),
        token_hint: secretHint(token),
        created_by: context.userId,
      });
      return { ...toChatToken(row), token };
    },

    async revokeChatToken(context: CompanyContext, tokenId: string): Promise<void> {
      const revoked = await repo.revokeChatToken(db, context.companyId, tokenId);
      callers.clear();
      if (!revoked) throw AppErrors.notFound('Chat token', tokenId);
    },
  };
}

export type IdentityService = ReturnType<typeof createIdentityService>;
