import { sql } from 'kysely';
import type { Executor } from '../../db/database.js';
import { isPgError, PG_UNIQUE_VIOLATION } from '../../db/errors.js';
import { AppErrors } from '../../http/errors.js';

export async function findApiKeyCaller(db: Executor, keyHash: Buffer) {
  return db
    .selectFrom('api_keys as k')
    .innerJoin('users as u', 'u.id', 'k.user_id')
    .leftJoin('company_members as m', (join) =>
      join.onRef('m.user_id', '=', 'u.id').onRef('m.company_id', '=', 'u.active_company_id'),
    )
    .select(['k.id as api_key_id', 'k.key_hash', 'u.id as user_id', 'u.email', 'm.company_id', 'm.role'])
    .where('k.key_hash', '=', keyHash)
    .where('k.revoked_at', 'is', null)
    .executeTakeFirst();
}

export async function findChatTokenCaller(db: Executor, tokenHash: Buffer) {
  return db
    .selectFrom('chat_tokens')
    .select(['id', 'token_hash', 'company_id', 'agent_id'])
    .where('token_hash', '=', tokenHash)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
}

export const USER_COLUMNS = ['id', 'email', 'first_name', 'last_name', 'active_company_id', 'created_at'] as const;

export async function findUser(db: Executor, userId: string) {
  return db.selectFrom('users').select(USER_COLUMNS).where('id', '=', userId).executeTakeFirst();
}

export async function findUserByEmail(db: Executor, email: string) {
  return db
    .selectFrom('users')
    .select(USER_COLUMNS)
    .where(sql`lower(email)`, '=', email.toLowerCase())
    .executeTakeFirst();
}

export async function insertUser(
  db: Executor,
  user: { email: string; first_name: string; last_name: string; created_in_company_id?: string | null },
) {
  try {
    return await db
      .insertInto('users')
      .values({
        email: user.email,
        first_name: user.first_name,
        last_name: user.last_name,
        created_in_company_id: user.created_in_company_id ?? null,
      })
      .returning(USER_COLUMNS)
      .executeTakeFirstOrThrow();
  } catch (error) {
    if (isPgError(error, PG_UNIQUE_VIOLATION))
      throw AppErrors.conflict(`A user with e-mail ${user.email} already exists`);
    throw error;
  }
}

const API_KEY_COLUMNS = ['id', 'name', 'key_hint', 'created_at'] as const;

export async function insertApiKey(
  db: Executor,
  key: { user_id: string; name: string; key_hash: Buffer; key_hint: string },
) {
  return db
    .insertInto('api_keys')
    .values({ user_id: key.user_id, name: key.name, key_hash: key.key_hash, key_hint: key.key_hint })
    .returning(API_KEY_COLUMNS)
    .executeTakeFirstOrThrow();
}

export async function listApiKeys(db: Executor, userId: string, skip: number, limit: number) {
  const base = db.selectFrom('api_keys').where('user_id', '=', userId).where('revoked_at', 'is', null);
  const [rows, count] = await Promise.all([
    base.select(API_KEY_COLUMNS).orderBy('created_at', 'desc').orderBy('id').offset(skip).limit(limit).execute(),
    base.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: count.total };
}

/** Revokes one of the user's own keys; false when there is no such live key. */
export async function revokeApiKey(db: Executor, userId: string, keyId: string): Promise<boolean> {
  const result = await db
    .updateTable('api_keys')
    .set({ revoked_at: sql`now()` })
    .where('id', '=', keyId)
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

const CHAT_TOKEN_COLUMNS = ['id', 'name', 'agent_id', 'token_hint', 'created_by', 'created_at'] as const;

export async function insertChatToken(
  db: Executor,
  token: {
    company_id: string;
    agent_id: string | null;
    name: string;
    token_hash: Buffer;
    token_hint: string;
    created_by: string | null;
  },
) {
  return db
    .insertInto('chat_tokens')
    .values({
      company_id: token.company_id,
      agent_id: token.agent_id,
      name: token.name,
      token_hash: token.token_hash,
      token_hint: token.token_hint,
      created_by: token.created_by,
    })
    .returning(CHAT_TOKEN_COLUMNS)
    .executeTakeFirstOrThrow();
}

export async function listChatTokens(db: Executor, companyId: string, skip: number, limit: number) {
  const base = db.selectFrom('chat_tokens').where('company_id', '=', companyId).where('revoked_at', 'is', null);
  const [rows, count] = await Promise.all([
    base.select(CHAT_TOKEN_COLUMNS).orderBy('created_at', 'desc').orderBy('id').offset(skip).limit(limit).execute(),
    base.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: count.total };
}

export async function revokeChatToken(db: Executor, companyId: string, tokenId: string): Promise<boolean> {
  const result = await db
    .updateTable('chat_tokens')
    .set({ revoked_at: sql`now()` })
    .where('id', '=', tokenId)
    .where('company_id', '=', companyId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}
