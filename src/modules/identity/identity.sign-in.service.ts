/**
 * People signing in: passwords set by accepting an invitation or following a single-use link,
 * e-mail + password sign-in with a lock-out that doubles per failure, sessions in the database
 * (the cookie's id stored as SHA-256, an absolute and an idle lifetime), sign-out here or
 * everywhere, and password resets by e-mail. Unknown e-mails and wrong passwords get the same
 * answer, after the same scrypt work.
 */
import type { Db, Executor } from '../../db/database.js';
import type { UserCaller } from '../../http/caller.js';
import { AppError, AppErrors } from '../../http/errors.js';
import { csrfTokenOf } from '../../http/session-cookie.js';
import type { Clock } from '../../lib/clock.js';
import { generateSecret, hashSecret, sameHash } from '../../lib/secrets.js';
import type { Mailer } from '../../ports/mailer.js';
import type { CompaniesService } from '../companies/index.js';
import { decoyHash, hashPassword, passwordProblem, verifyPassword } from './identity.passwords.js';
import { findUser, findUserByEmail, insertUser } from './identity.repo.js';
import type { SignedIn } from './identity.schemas.js';
import { toUser } from './identity.service.js';
import * as repo from './identity.sign-in.repo.js';

export interface SignInSettings {
  sessionTtlHours: number;
  sessionIdleMinutes: number;
  resetTtlMinutes: number;
  lockAfter: number;
  lockSeconds: number;
  lockMaxSeconds: number;
}

export interface SignInDeps {
  db: Db;
  clock: Clock;
  mailer: Mailer;
  companies: Pick<CompaniesService, 'acceptInvitationAs'>;
  settings: SignInSettings;
  publicBaseUrl: string;
}

/** A session just started: the cookie's value (shown nowhere else) and what the page learns. */
export interface StartedSession {
  sessionId: string;
  expiresAt: Date;
  body: SignedIn;
}

const WRONG = 'E-mail or password is wrong';
/** Reset links one user may be sent per hour (more requests are answered alike but send nothing). */
const RESETS_PER_HOUR = 3;
const TOUCH_AFTER_MS = 60_000;

export function createSignInService(deps: SignInDeps) {
  const { db, clock, settings } = deps;
  const idleSeconds = settings.sessionIdleMinutes * 60;

  function requirePolicy(password: string, email: string) {
    const problem = passwordProblem(password, email);
    if (problem) throw AppErrors.validation(problem);
  }

  async function startSession(executor: Executor, userId: string, userAgent: string): Promise<StartedSession> {
    const now = clock.now();
    const sessionId = generateSecret('ss_');
    const expiresAt = new Date(now.getTime() + settings.sessionTtlHours * 3_600_000);
    await repo.insertSession(executor, {
      user_id: userId,
      id_hash: hashSecret(sessionId),
      user_agent: userAgent.slice(0, 300),
      expires_at: expiresAt,
      now,
    });
    const user = (await findUser(executor, userId))!;
    return {
      sessionId,
      expiresAt,
      body: { user: toUser(user), csrf_token: csrfTokenOf(sessionId), expires_at: expiresAt.toISOString() },
    };
  }

  /** 429 with the seconds left while the account is locked. */
  function lockedError(lockedUntil: Date, now: Date) {
    const seconds = Math.max(1, Math.ceil((lockedUntil.getTime() - now.getTime()) / 1000));
    return AppErrors.tooManyRequests(
      `Too many failed sign-ins: this account is locked for ${seconds} s (or reset the password by e-mail)`,
      seconds,
    );
  }

  return {
    async authenticateSession(sessionId: string): Promise<UserCaller | null> {
      const hash = hashSecret(sessionId);
      const now = clock.now();
      const row = await repo.findSessionCaller(db, hash, now, idleSeconds);
      if (!row || !sameHash(row.id_hash, hash)) return null;
      if (now.getTime() - row.last_seen_at.getTime() > TOUCH_AFTER_MS) await repo.touchSession(db, row.session_id, now);
      return {
        kind: 'user',
        userId: row.user_id,
        email: row.email,
        apiKeyId: null,
        sessionId: row.session_id,
        companyId: row.company_id ?? null,
        role: row.role ?? null,
      };
    },

    async signIn(input: { email: string; password: string }, userAgent: string): Promise<StartedSession> {
      const now = clock.now();
      const row = await repo.findPasswordByEmail(db, input.email);
      if (!row?.password_hash) {
        await verifyPassword(input.password, await decoyHash());
        throw AppErrors.unauthorized(WRONG);
      }
      if (row.locked_until && row.locked_until > now) throw lockedError(row.locked_until, now);
      if (!(await verifyPassword(input.password, row.password_hash))) {
        await repo.recordFailure(db, row.user_id, now, {
          threshold: settings.lockAfter,
          baseSeconds: settings.lockSeconds,
          maxSeconds: settings.lockMaxSeconds,
        });
        throw AppErrors.unauthorized(WRONG);
      }
      await repo.clearFailures(db, row.user_id);
      return startSession(db, row.user_id, userAgent);
    },

    /** What the signed-in page needs after a reload: the user, the CSRF token and the end of the session. */
    async session(caller: UserCaller, sessionId: string | undefined): Promise<SignedIn> {
      if (!caller.sessionId || !sessionId) {
        throw AppErrors.badRequest('This request came with an API key, not a console session');
      }
      const user = await findUser(db, caller.userId);
      if (!user) throw AppErrors.notFound('User');
      const row = await repo.findSessionCaller(db, hashSecret(sessionId), clock.now(), idleSeconds);
      if (!row) throw AppErrors.unauthorized('Your session has ended: sign in again');
      return { user: toUser(user), csrf_token: csrfTokenOf(sessionId), expires_at: row.expires_at.toISOString() };
    },

    async signOut(caller: UserCaller): Promise<void> {
      if (!caller.sessionId) {
        throw AppErrors.badRequest('Sign-out ends a console session; an API key is revoked with DELETE /api-keys/{id}');
      }
      await repo.revokeSession(db, caller.sessionId, clock.now());
    },

    /** Ends every session of the caller (this browser's too); API keys are untouched. */
    async signOutEverywhere(caller: UserCaller): Promise<{ revoked: number }> {
      return { revoked: await repo.revokeSessionsOfUser(db, caller.userId, clock.now()) };
    },

    /**
     * Accepts an invitation as a person without an account (or without a password yet): the
     * password is set, the user joins with the invited role and is signed in.
     */
    async acceptInvitation(
      input: { token: string; password: string; first_name?: string; last_name?: string },
      userAgent: string,
    ): Promise<StartedSession & { companyId: string }> {
      const passwordHash = await hashPassword(input.password);
      let userId = '';
      const accepted = await deps.companies.acceptInvitationAs(input.token, async (trx, email) => {
        requirePolicy(input.password, email);
        const existing = await findUserByEmail(trx, email);
        if (existing && (await repo.hasPassword(trx, existing.id))) {
          throw AppErrors.conflict(
            'An account with this e-mail already has a password: sign in, then accept the invitation',
          );
        }
        const user =
          existing ??
          (await insertUser(trx, { email, first_name: input.first_name ?? '', last_name: input.last_name ?? '' }));
        await repo.setPassword(trx, user.id, passwordHash, clock.now());
        userId = user.id;
        return { userId: user.id, activeCompanyId: user.active_company_id };
      });
      return { ...(await startSession(db, userId, userAgent)), companyId: accepted.company.id };
    },

    /** Mails a single-use reset link when the e-mail has an account; the answer is the same either way. */
    async requestPasswordReset(email: string): Promise<void> {
      const now = clock.now();
      const user = await findUserByEmail(db, email);
      if (!user) return;
      if ((await repo.countRecentLinks(db, user.id, new Date(now.getTime() - 3_600_000))) >= RESETS_PER_HOUR) return;
      const token = generateSecret('pw_');
      const expiresAt = new Date(now.getTime() + settings.resetTtlMinutes * 60_000);
      await repo.insertPasswordLink(db, {
        user_id: user.id,
        purpose: 'reset',
        token_hash: hashSecret(token),
        expires_at: expiresAt,
      });
      await deps.mailer.send({
        to: user.email,
        subject: 'Reset your Switchboard password',
        kind: 'password_reset',
        text: [
          'Someone (hopefully you) asked to reset the password of your Switchboard account.',
          '',
          'Choose a new password here (the link works once, until ' + expiresAt.toISOString() + '):',
          `  ${passwordLinkUrl(deps.publicBaseUrl, token)}`,
          '',
          'If you did not ask for this, ignore this message: your password stays as it is.',
        ].join('\n'),
      });
    },

    /** Sets the password from a single-use link, ends every other session and signs in. */
    async setPasswordWithLink(input: { token: string; password: string }, userAgent: string): Promise<StartedSession> {
      const passwordHash = await hashPassword(input.password);
      const now = clock.now();
      const outcome = await db.transaction().execute(async (trx) => {
        const link = await repo.findPasswordLinkForUpdate(trx, hashSecret(input.token));
        if (!link) throw AppErrors.notFound('Password link');
        if (link.used_at) return { gone: 'This link has already been used: ask for a new one' };
        if (link.expires_at <= now) {
          return { gone: `This link expired at ${link.expires_at.toISOString()}: ask for a new one` };
        }
        requirePolicy(input.password, link.email);
        await repo.setPassword(trx, link.user_id, passwordHash, now);
        await repo.usePasswordLinks(trx, link.user_id, now);
        await repo.revokeSessionsOfUser(trx, link.user_id, now);
        return { gone: null, session: await startSession(trx, link.user_id, userAgent) };
      });
      // 410: the link existed but can no longer be used.
      if (outcome.gone !== null) throw new AppError(410, outcome.gone);
      return outcome.session;
    },
  };
}

/** The console page that sets a password; the token travels in the fragment, never to a server log. */
export function passwordLinkUrl(publicBaseUrl: string, token: string): string {
  return `${publicBaseUrl}/console/#/set-password?token=${encodeURIComponent(token)}`;
}

/** Creates the bootstrap owner's first sign-in link inside the bootstrap's transaction. */
export async function createFirstSignInLink(executor: Executor, userId: string, expiresAt: Date): Promise<string> {
  const token = generateSecret('pw_');
  await repo.insertPasswordLink(executor, {
    user_id: userId,
    purpose: 'first_sign_in',
    token_hash: hashSecret(token),
    expires_at: expiresAt,
  });
  return token;
}

export type SignInService = ReturnType<typeof createSignInService>;
