/**
 * A Slack Web API peer (`base_url` = `<url>/api`): bearer bot token checked (`not_authed`,
 * `invalid_auth`), `auth.test` and `chat.postMessage` with a JSON body (`channel_not_found`,
 * `no_text`), every answer HTTP 200 with `{ok}` as Slack does. Faults (429 with Retry-After,
 * 5xx, hangs) come from the vendor peer underneath.
 */
import { startVendorPeer, type PeerRequest, type VendorPeer } from './vendor-peer.js';

export interface FakeSlack extends VendorPeer {
  baseUrl: string;
  token: string;
  /** Messages posted, in order. */
  posted: { channel: string; text: string }[];
}

const CHANNELS: Record<string, string> = { C0SUPPORT: 'C0SUPPORT', '#support': 'C0SUPPORT' };

export async function startFakeSlack(token = 'xoxb-1111-2222-peertokenvalue'): Promise<FakeSlack> {
  const posted: { channel: string; text: string }[] = [];
  const peer = await startVendorPeer((request: PeerRequest) => {
    const auth = request.headers.authorization;
    if (!auth) return { status: 200, body: { ok: false, error: 'not_authed' } };
    if (auth !== `Bearer ${token}`) return { status: 200, body: { ok: false, error: 'invalid_auth' } };
    if (request.method !== 'POST') return { status: 200, body: { ok: false, error: 'invalid_request' } };
    const body = (request.json ?? {}) as Record<string, unknown>;
    switch (request.path) {
      case '/api/auth.test':
        return {
          status: 200,
          body: {
            ok: true,
            url: 'https://acme.slack.com/',
            team: 'Acme',
            user: 'switchboard',
            team_id: 'T0ACME',
            user_id: 'U0BOT',
            bot_id: 'B0BOT',
          },
        };
      case '/api/chat.postMessage': {
        if (!String(request.headers['content-type']).startsWith('application/json')) {
          return { status: 200, body: { ok: false, error: 'invalid_form_data' } };
        }
        const channel = CHANNELS[String(body.channel)];
        if (!channel) return { status: 200, body: { ok: false, error: 'channel_not_found' } };
        if (typeof body.text !== 'string' || !body.text) return { status: 200, body: { ok: false, error: 'no_text' } };
        posted.push({ channel, text: body.text });
        return {
          status: 200,
          body: {
            ok: true,
            channel,
            ts: `1700000000.${String(posted.length).padStart(6, '0')}`,
            message: { type: 'message', text: body.text },
          },
        };
      }
      default:
        return { status: 200, body: { ok: false, error: 'unknown_method' } };
    }
  });
  return Object.assign(peer, { baseUrl: `${peer.url}/api`, token, posted });
}
