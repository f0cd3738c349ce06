/**
 * Slack, both ways, for channel tests. Inbound: events signed as Slack signs them (v0 HMAC-SHA256
 * of `v0:{timestamp}:{body}` with the app's signing secret, `X-Slack-Request-Timestamp`, retries
 * with `X-Slack-Retry-Num` / `X-Slack-Retry-Reason`), in the Events API envelope
 * (`event_callback` with `event_id`, `authorizations`). Outbound: a Web API peer (`base_url` =
 * `<url>/api`) for `auth.test` and `chat.postMessage` as Slack answers them — bearer checked
 * (`not_authed`, `invalid_auth`), JSON body, `channel` and `text` or `blocks` required, section
 * text at most 3,000 characters and 50 blocks (`invalid_blocks`), HTTP 200 with `{ok}` always.
 */
import { createHmac, randomUUID } from 'node:crypto';
import { startVendorPeer, type PeerRequest, type VendorPeer } from './vendor-peer.js';

export interface SlackPosted {
  channel: string;
  thread_ts: string | undefined;
  text: string;
  blocks: { type: string; text?: { type: string; text: string } }[] | undefined;
  authorization: string | undefined;
}

export interface SlackPeer extends VendorPeer {
  baseUrl: string;
  token: string;
  signingSecret: string;
  botUserId: string;
  posted: SlackPosted[];
  /** Headers Slack sends with `body` (signed now, or at `timestamp`). */
  sign(body: string, options?: { timestamp?: number; retry?: number; secret?: string }): Record<string, string>;
  /** An `event_callback` envelope around `event`. */
  envelope(event: Record<string, unknown>, eventId?: string): string;
}

function postMessage(request: PeerRequest, posted: SlackPosted[]) {
  if (!String(request.headers['content-type']).startsWith('application/json')) {
    return { status: 200, body: { ok: false, error: 'invalid_form_data' } };
  }
  const body = (request.json ?? {}) as Record<string, unknown>;
  if (typeof body.channel !== 'string' || !body.channel)
    return { status: 200, body: { ok: false, error: 'channel_not_found' } };
  const blocks = body.blocks as SlackPosted['blocks'];
  if (blocks !== undefined) {
    const bad =
      !Array.isArray(blocks) ||
      blocks.length > 50 ||
      blocks.some((block) => block.type === 'section' && (!block.text?.text || block.text.text.length > 3000));
    if (bad) return { status: 200, body: { ok: false, error: 'invalid_blocks' } };
  }
  if ((typeof body.text !== 'string' || !body.text) && !blocks)
    return { status: 200, body: { ok: false, error: 'no_text' } };
  if (typeof body.text === 'string' && body.text.length > 40_000)
    return { status: 200, body: { ok: false, error: 'msg_too_long' } };
  posted.push({
    channel: body.channel,
    thread_ts: typeof body.thread_ts === 'string' ? body.thread_ts : undefined,
    text: String(body.text ?? ''),
    blocks,
    authorization: request.headers.authorization,
  });
  const ts = `1700000100.${String(posted.length).padStart(6, '0')}`;
  return {
    status: 200,
    body: { ok: true, channel: body.channel, ts, message: { type: 'message', text: body.text, ts } },
  };
}

export async function startSlackPeer(
  token = 'xoxb-2222-3333-channelpeertoken',
  signingSecret = '8f742231b10e8888abcd99yyyzzz85a5',
): Promise<SlackPeer> {
  const posted: SlackPosted[] = [];
  const botUserId = 'U0BOT';
  const peer = await startVendorPeer((request) => {
    const auth = request.headers.authorization;
    if (!auth) return { status: 200, body: { ok: false, error: 'not_authed' } };
    if (auth !== `Bearer ${token}`) return { status: 200, body: { ok: false, error: 'invalid_auth' } };
    switch (request.path) {
      case '/api/auth.test':
        return {
          status: 200,
          body: {
            ok: true,
            url: 'https://acme.slack.com/',
            team: 'Acme',
            user: 'helper',
            team_id: 'T0ACME',
            user_id: botUserId,
            bot_id: 'B0BOT',
          },
        };
      case '/api/chat.postMessage':
        return postMessage(request, posted);
      default:
        return { status: 200, body: { ok: false, error: 'unknown_method' } };
    }
  });
  return Object.assign(peer, {
    baseUrl: `${peer.url}/api`,
    token,
    signingSecret,
    botUserId,
    posted,
    sign(body: string, options: { timestamp?: number; retry?: number; secret?: string } = {}) {
      const timestamp = String(options.timestamp ?? Math.floor(Date.now() / 1000));
      const signature = createHmac('sha256', options.secret ?? signingSecret)
        .update(`v0:${timestamp}:${body}`)
        .digest('hex');
      return {
        'content-type': 'application/json',
        'x-slack-request-timestamp': timestamp,
        'x-slack-signature': `v0=${signature}`,
        ...(options.retry
          ? { 'x-slack-retry-num': String(options.retry), 'x-slack-retry-reason': 'http_timeout' }
          : {}),
      };
    },
    envelope(
      event: Record<string, unknown>,
      eventId = `Ev${randomUUID().replace(/-/g, '').slice(0, 10).toUpperCase()}`,
    ) {
      return JSON.stringify({
        token: 'deprecated-verification-token',
        team_id: 'T0ACME',
        api_app_id: 'A0APP',
        event: { event_ts: event.ts, ...event },
        type: 'event_callback',
        event_id: eventId,
        event_time: Math.floor(Date.now() / 1000),
        authorizations: [
          { enterprise_id: null, team_id: 'T0ACME', user_id: botUserId, is_bot: true, is_enterprise_install: false },
        ],
        is_ext_shared_channel: false,
        event_context: '4-eyJldCI6Im1lc3NhZ2UifQ',
      });
    },
  });
}
