/**
 * Slack Web API (team messaging): `auth.test` checks the bot token, `chat.postMessage` posts to
 * the configured channel. Slack answers most failures with HTTP 200 and `{ok: false, error}`;
 * rate limits are HTTP 429 with Retry-After (seconds), or — for posting too fast to a channel —
 * HTTP 200 `{ok: false, error: "rate_limited"}`, retried like a 429.
 */
import { Type } from '@sinclair/typebox';
import { ConnectorError, type ConnectorContext, type ConnectorDefinition } from '../../../ports/connectors.js';
import { BaseUrl, SecretText, apiRoot } from '../fields.js';
import { retryAfterMs, type ConnectorHttp, type HttpAnswer } from '../http.js';

export interface SlackConfig {
  bot_token: string;
  channel: string;
  /** The app's signing secret: verifies Events API requests of a `slack` deployment (DESIGN §12). */
  signing_secret?: string;
  base_url?: string;
}

const VENDOR = 'Slack';

/** Slack error codes meaning the token cannot do this (re-trying will not help). */
const AUTH_ERRORS: Record<string, string> = {
  not_authed: 'no token was sent',
  invalid_auth: 'the bot token was refused',
  account_inactive: 'the token belongs to a deleted user or workspace',
  token_revoked: 'the token has been revoked',
  token_expired: 'the token has expired',
  no_permission: 'the token lacks a permission',
  missing_scope: 'the token lacks a scope (chat:write is needed)',
  not_allowed_token_type: 'this token type cannot call this method (use a bot token, xoxb-)',
};

/** Slack's rate-limit codes in an HTTP 200 answer (`rate_limited`: chat.postMessage's message limit). */
const RATE_LIMIT_ERRORS = new Set(['ratelimited', 'rate_limited']);

/** Slack error codes of a passing trouble on its side. */
const RETRYABLE_ERRORS = new Set([
  ...RATE_LIMIT_ERRORS,
  'internal_error',
  'fatal_error',
  'service_unavailable',
  'request_timeout',
]);

const OTHER_ERRORS: Record<string, string> = {
  channel_not_found: 'the channel was not found (use its id, or invite the app to it)',
  not_in_channel: 'the app is not a member of the channel (invite it)',
  is_archived: 'the channel is archived',
  msg_too_long: 'the message is too long',
  no_text: 'the message is empty',
};

interface SlackAnswer {
  ok?: boolean;
  error?: string;
  [key: string]: unknown;
}

export function slackError(code: string, status?: number, headers: HttpAnswer['headers'] = {}): ConnectorError {
  if (RATE_LIMIT_ERRORS.has(code)) {
    // As a 429: retryable, after Retry-After when Slack sends one.
    const wait = retryAfterMs(headers['retry-after']);
    const after = wait === undefined ? '' : ` (retry after ${Math.ceil(wait / 1000)} s)`;
    return new ConnectorError(VENDOR, `rate limit reached (${code})${after}`, {
      status,
      code,
      retryable: true,
      retryAfterMs: wait,
    });
  }
  const words = AUTH_ERRORS[code] ?? OTHER_ERRORS[code];
  return new ConnectorError(VENDOR, words ? `${code} (${words})` : code, {
    status,
    code,
    retryable: RETRYABLE_ERRORS.has(code),
  });
}

/** One Web API method called with the bot token (JSON body); Slack's `{ok: false, error}` thrown as ConnectorError. */
export async function callSlack(
  http: ConnectorHttp,
  method: string,
  body: Record<string, unknown>,
  context: ConnectorContext<{ bot_token: string; base_url?: string }>,
) {
  const answer = await http.request({
    vendor: VENDOR,
    method: 'POST',
    url: `${apiRoot(context.config, 'https://slack.com/api')}/${method}`,
    headers: { authorization: `Bearer ${context.config.bot_token}` },
    json: body,
    signal: context.signal,
    errorMessage: (data) => (data as SlackAnswer | undefined)?.error,
  });
  const data = answer.body as SlackAnswer | undefined;
  if (!data || typeof data !== 'object') {
    throw new ConnectorError(VENDOR, `unexpected answer to ${method}`, { status: answer.status, retryable: false });
  }
  if (data.ok !== true)
    throw slackError(typeof data.error === 'string' ? data.error : 'unknown_error', answer.status, answer.headers);
  return data;
}

export function slackConnector(http: ConnectorHttp): ConnectorDefinition<SlackConfig> {
  const call = (method: string, body: Record<string, unknown>, context: ConnectorContext<SlackConfig>) =>
    callSlack(http, method, body, context);

  return {
    type: 'slack',
    name: VENDOR,
    description: "Team messaging: post a message to the team's channel (escalations, summaries).",
    listed: true,
    secretKeys: ['bot_token', 'signing_secret'],
    config: Type.Object(
      {
        bot_token: SecretText('Bot user OAuth token (xoxb-…) with the chat:write scope'),
        channel: Type.String({
          minLength: 1,
          maxLength: 80,
          pattern: '^[#@]?[A-Za-z0-9._-]+$',
          description: 'Channel id (C0123…) or #name the app posts to.',
        }),
        signing_secret: Type.Optional(
          SecretText("The app's signing secret (Basic Information), needed to deploy an agent on Slack"),
        ),
        base_url: BaseUrl('https://slack.com/api'),
      },
      { additionalProperties: false },
    ),
    async test(context) {
      const data = await call('auth.test', {}, context);
      const team = typeof data.team === 'string' ? data.team : 'the workspace';
      const user = typeof data.user === 'string' ? ` as ${data.user}` : '';
      return { detail: `Connected to Slack workspace ${team}${user}` };
    },
    tools: (config) => [
      {
        name: 'post_message',
        description: `Post a message to the team's Slack channel ${config.channel} (for example to hand a conversation to a person).`,
        input: Type.Object(
          { text: Type.String({ minLength: 1, maxLength: 4000, description: 'The message, Slack mrkdwn.' }) },
          { additionalProperties: false },
        ),
        notification: 'slack_message',
        async run(input, context) {
          const data = await call(
            'chat.postMessage',
            { channel: context.config.channel, text: String(input.text), unfurl_links: false, unfurl_media: false },
            context,
          );
          return {
            summary: `Posted a message to Slack ${context.config.channel}`,
            data: { channel: data.channel ?? context.config.channel, ts: data.ts ?? null },
          };
        },
      },
    ],
  };
}
