/**
 * `/api/public/auth/…`: signing in (no credential yet: mounted in a scope of its own, limited
 * per client address) and the session's own routes (mounted with the public family's
 * credential, so the session cookie and its CSRF token are checked like on every other route).
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { userCaller } from '../../http/auth.js';
import { errorResponses } from '../../http/errors.js';
import { clearSessionCookie, isSecureRequest, sessionIdOf, setSessionCookie } from '../../http/session-cookie.js';
import { AcceptInvitationBody, PasswordResetBody, SetPasswordBody, SignedIn, SignInBody } from './identity.schemas.js';
import type { SignInService, StartedSession } from './identity.sign-in.service.js';

const errors = errorResponses('detail-status', [400, 401, 403, 404, 409, 410, 415, 429, 500, 503]);
const tags = ['auth'];

function userAgentOf(request: FastifyRequest): string {
  const value = request.headers['user-agent'];
  return typeof value === 'string' ? value : '';
}

export function signInRoutes(signIn: SignInService, publicBaseUrl: string): FastifyPluginAsyncTypebox {
  const started = (request: FastifyRequest, reply: FastifyReply, session: StartedSession) => {
    setSessionCookie(reply, session.sessionId, session.expiresAt, isSecureRequest(request, publicBaseUrl));
    return session.body;
  };
  return async (app) => {
    app.post(
      '/auth/sign-in',
      {
        schema: {
          operationId: 'signIn',
          tags,
          security: [],
          summary: 'Sign in with e-mail and password (sets the session cookie)',
          description:
            'Starts a console session: the answer sets an HttpOnly, SameSite=Lax cookie (Secure over HTTPS) and carries the CSRF token to send as `x-csrf-token` with every write. A wrong e-mail or password is a 401 (the same for both); after repeated failures the account is locked for a while (429 with Retry-After).',
          body: SignInBody,
          response: { 200: SignedIn, ...errors },
        },
      },
      async (request, reply) => started(request, reply, await signIn.signIn(request.body, userAgentOf(request))),
    );

    app.post(
      '/auth/invitations/accept',
      {
        schema: {
          operationId: 'acceptInvitationWithPassword',
          tags,
          security: [],
          summary: 'Accept an invitation by choosing a password (signs in)',
          description:
            'For a person without a password yet: the invited e-mail gets an account (or its existing one a password), joins the company with the invited role, and is signed in. An account that already has a password signs in and accepts with `POST /companies/invitations/accept` instead (409).',
          body: AcceptInvitationBody,
          response: { 201: SignedIn, ...errors },
        },
      },
      async (request, reply) => {
        const session = await signIn.acceptInvitation(request.body, userAgentOf(request));
        return reply.code(201).send(started(request, reply, session));
      },
    );

    app.post(
      '/auth/password-reset',
      {
        schema: {
          operationId: 'requestPasswordReset',
          tags,
          security: [],
          summary: 'E-mail a single-use link that sets a new password',
          description: `Answers 202 whether or not the e-mail has an account. When it has, a link that works once (for PASSWORD_RESET_TTL_MINUTES, 60 by default) is e-mailed (SMTP, or the outbox); at most ${3} per hour.`,
          body: PasswordResetBody,
          response: { 202: Type.Null(), ...errors },
        },
      },
      async (request, reply) => {
        await signIn.requestPasswordReset(request.body.email);
        return reply.code(202).send(null);
      },
    );

    app.post(
      '/auth/password',
      {
        schema: {
          operationId: 'setPasswordWithLink',
          tags,
          security: [],
          summary: 'Set the password with a single-use link (signs in, ends other sessions)',
          description:
            'The token of a reset link or of the first sign-in link printed at first start. Sets the password, ends every other session of the user and signs in. A used or expired link is a 410.',
          body: SetPasswordBody,
          response: { 200: SignedIn, ...errors },
        },
      },
      async (request, reply) =>
        started(request, reply, await signIn.setPasswordWithLink(request.body, userAgentOf(request))),
    );
  };
}

export function sessionRoutes(signIn: SignInService, publicBaseUrl: string): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/auth/session',
      {
        schema: {
          operationId: 'getSession',
          tags,
          summary: "The console session's user, CSRF token and end",
          description: 'For a page that reloads: who is signed in, the CSRF token and when the session ends.',
          response: { 200: SignedIn, ...errors },
        },
      },
      async (request) => signIn.session(userCaller(request), sessionIdOf(request)),
    );

    app.post(
      '/auth/sign-out',
      {
        schema: {
          operationId: 'signOut',
          tags,
          summary: 'End this console session',
          description: 'Ends the session of the cookie and clears the cookie.',
          response: { 204: Type.Null(), ...errors },
        },
      },
      async (request, reply) => {
        await signIn.signOut(userCaller(request));
        clearSessionCookie(reply, isSecureRequest(request, publicBaseUrl));
        return reply.code(204).send(null);
      },
    );

    app.post(
      '/auth/sign-out-everywhere',
      {
        schema: {
          operationId: 'signOutEverywhere',
          tags,
          summary: 'End every console session of the caller (API keys keep working)',
          description: "Ends all of the caller's console sessions, on every browser, this one included.",
          response: { 200: Type.Object({ revoked: Type.Integer({ minimum: 0 }) }), ...errors },
        },
      },
      async (request, reply) => {
        const result = await signIn.signOutEverywhere(userCaller(request));
        clearSessionCookie(reply, isSecureRequest(request, publicBaseUrl));
        return result;
      },
    );
  };
}
