/** SQL of sign-in: passwords and their lock-out, sessions, single-use password links. */
import { sql } from 'kysely';
import type { Executor } from '../../db/database.js';

export async function findPasswordByEmail(db: Executor, email: string) {
  return db
    .selectFrom('users as u')
    .leftJoin('user_passwords as p', 'p.user_id', 'u.id')
    .select(['u.id as user_id', 'u.email', 'p.password_hash', 'p.failed_attempts', 'p.locked_until'])
    .where(sql`lower(u.email)`, '=', email.toLowerCase())
    .executeTakeFirst();
}

export async function hasPassword(db: Executor, userId: string): Promise<boolean> {
  const row = await db.selectFrom('user_passwords').select('user_id').where('user_id', '=', userId).executeTakeFirst();
  return row !== undefined;
}

/** Sets (or replaces) the password and clears the lock-out. */
export async function setPassword(db: Executor, userId: string, passwordHash: string, now: Date) {
  await db
    .insertInto('user_passwords')
    .values({ user_id: userId, password_hash: passwordHash, failed_attempts: 0, locked_until: null, changed_at: now })
    .onConflict((oc) =>
      oc
        .column('user_id')
        .doUpdateSet({ password_hash: passwordHash, failed_attempts: 0, locked_until: null, changed_at: now }),
    )
    .execute();
}

/**
 * Counts a failed sign-in in one statement (concurrent guesses each count) and locks the account
 * once the count reaches `threshold`: `baseSeconds` doubled per failure past it, at most `maxSeconds`.
 */
export async function recordFailure(
  db: Executor,
  userId: string,
  now: Date,
  lock: { threshold: number; baseSeconds: number; maxSeconds: number },
) {
  return db
    .updateTable('user_passwords')
    .set({
      failed_attempts: sql`failed_attempts + 1`,
      locked_until: sql`case when failed_attempts + 1 >= ${lock.threshold}
        then ${now}::timestamptz + make_interval(secs => least(${lock.maxSeconds}::float8,
          ${lock.baseSeconds}::float8 * power(2, least(failed_attempts + 1 - ${lock.threshold}, 20))))
        else locked_until end`,
    })
    .where('user_id', '=', userId)
    .returning(['failed_attempts', 'locked_until'])
    .executeTakeFirst();
}

export async function clearFailures(db: Executor, userId: string) {
  await db
    .updateTable('user_passwords')
    .set({ failed_attempts: 0, locked_until: null })
    .where('user_id', '=', userId)
    .where('failed_attempts', '>', 0)
    .execute();
}

export async function insertSession(
  db: Executor,
  session: { user_id: string; id_hash: Buffer; user_agent: string; expires_at: Date; now: Date },
) {
  return db
    .insertInto('user_sessions')
    .values({
      user_id: session.user_id,
      id_hash: session.id_hash,
      user_agent: session.user_agent,
      created_at: session.now,
      last_seen_at: session.now,
      expires_at: session.expires_at,
    })
    .returning(['id', 'expires_at'])
    .executeTakeFirstOrThrow();
}

/** A live session with its user, active company and role there (one indexed query). */
export async function findSessionCaller(db: Executor, idHash: Buffer, now: Date, idleSeconds: number) {
  return db
    .selectFrom('user_sessions as s')
    .innerJoin('users as u', 'u.id', 's.user_id')
    .leftJoin('company_members as m', (join) =>
      join.onRef('m.user_id', '=', 'u.id').onRef('m.company_id', '=', 'u.active_company_id'),
    )
    .select([
      's.id as session_id',
      's.id_hash',
      's.expires_at',
      's.last_seen_at',
      'u.id as user_id',
      'u.email',
      'm.company_id',
      'm.role',
    ])
    .where('s.id_hash', '=', idHash)
    .where('s.revoked_at', 'is', null)
    .where('s.expires_at', '>', now)
    .where('s.last_seen_at', '>', sql<Date>`${now}::timestamptz - make_interval(secs => ${idleSeconds}::float8)`)
    .executeTakeFirst();
}

export async function touchSession(db: Executor, sessionId: string, now: Date) {
  await db.updateTable('user_sessions').set({ last_seen_at: now }).where('id', '=', sessionId).execute();
}

export async function revokeSession(db: Executor, sessionId: string, now: Date) {
  await db
    .updateTable('user_sessions')
    .set({ revoked_at: now })
    .where('id', '=', sessionId)
    .where('revoked_at', 'is', null)
    .execute();
}

export async function revokeSessionsOfUser(db: Executor, userId: string, now: Date): Promise<number> {
  const result = await db
    .updateTable('user_sessions')
    .set({ revoked_at: now })
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

export async function insertPasswordLink(
  db: Executor,
  link: { user_id: string; purpose: 'reset' | 'first_sign_in'; token_hash: Buffer; expires_at: Date },
) {
  await db.insertInto('password_links').values(link).execute();
}

export async function findPasswordLinkForUpdate(db: Executor, tokenHash: Buffer) {
  return db
    .selectFrom('password_links as l')
    .innerJoin('users as u', 'u.id', 'l.user_id')
    .select(['l.id', 'l.user_id', 'l.purpose', 'l.expires_at', 'l.used_at', 'u.email'])
    .where('l.token_hash', '=', tokenHash)
    .forUpdate('l')
    .executeTakeFirst();
}

/** Marks the link used, and every other unused link of the user with it (one reset ends them all). */
export async function usePasswordLinks(db: Executor, userId: string, now: Date) {
  await db
    .updateTable('password_links')
    .set({ used_at: now })
    .where('user_id', '=', userId)
    .where('used_at', 'is', null)
    .execute();
}

export async function countRecentLinks(db: Executor, userId: string, since: Date): Promise<number> {
  const row = await db
    .selectFrom('password_links')
    .select((eb) => eb.fn.countAll<string>().as('count'))
    .where('user_id', '=', userId)
    .where('created_at', '>', since)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}
