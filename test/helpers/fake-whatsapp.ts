/**
 * A WhatsApp Cloud API peer (`base_url` = its url): the Graph API's `/{version}/{phone_number_id}`
 * (GET with `fields`) and `/{version}/{phone_number_id}/messages` (POST, JSON). Bearer token
 * checked as Graph does (none: 400 code 2500; wrong: 401 code 190), unknown phone number ids
 * (400 code 100, subcode 33), malformed message bodies (400 code 100), undeliverable numbers
 * (400 code 131026), every error in Graph's `{error: {message, type, code, error_subcode,
 * fbtrace_id}}` shape. Faults (429, 5xx, hangs) come from the vendor peer underneath.
 */
import { startVendorPeer, type PeerAnswer, type PeerRequest, type VendorPeer } from './vendor-peer.js';

export interface FakeWhatsapp extends VendorPeer {
  token: string;
  phoneNumberId: string;
  /** Numbers (digits) the peer refuses with 131026. */
  undeliverable: Set<string>;
  sent: { to: string; body: string }[];
}

let trace = 0;

/** A Graph error answer. */
export function graphError(
  status: number,
  code: number,
  message: string,
  extra: { subcode?: number; details?: string } = {},
): PeerAnswer {
  return {
    status,
    ...(status === 401 ? { headers: { 'www-authenticate': 'OAuth "Facebook Platform" "invalid_token"' } } : {}),
    body: {
      error: {
        message,
        type: 'OAuthException',
        code,
        ...(extra.details ? { error_data: { messaging_product: 'whatsapp', details: extra.details } } : {}),
        ...(extra.subcode ? { error_subcode: extra.subcode } : {}),
        fbtrace_id: `AbCdEf${++trace}`,
      },
    },
  };
}

export async function startFakeWhatsapp(
  token = 'EAAGpeer-whatsapp-system-user-token',
  phoneNumberId = '106540352242922',
): Promise<FakeWhatsapp> {
  const sent: { to: string; body: string }[] = [];
  const undeliverable = new Set<string>(['15550000000']);
  const peer = await startVendorPeer((request: PeerRequest) => {
    const auth = request.headers.authorization;
    if (!auth)
      return graphError(400, 2500, 'An active access token must be used to query information about the current user.');
    if (auth !== `Bearer ${token}`)
      return graphError(401, 190, 'Invalid OAuth access token - Cannot parse access token');
    const url = new URL(request.path, 'http://peer');
    const match = /^\/(v[0-9]+\.[0-9]+)\/([0-9]+)(\/messages)?$/.exec(url.pathname);
    if (!match) return graphError(400, 2500, 'Unknown path components: ' + url.pathname);
    if (match[2] !== phoneNumberId) {
      return graphError(
        400,
        100,
        `Unsupported ${request.method.toLowerCase()} request. Object with ID '${match[2]}' does not exist, cannot be loaded due to missing permissions, or does not support this operation.`,
        { subcode: 33 },
      );
    }
    if (!match[3]) {
      if (request.method !== 'GET') return graphError(400, 100, 'Unsupported request method');
      const fields = (url.searchParams.get('fields') ?? '').split(',').filter(Boolean);
      const all: Record<string, string> = {
        display_phone_number: '+1 555-010-0199',
        verified_name: 'Acme Support',
        quality_rating: 'GREEN',
      };
      const body: Record<string, string> = {};
      for (const field of fields) if (field in all) body[field] = all[field]!;
      return { status: 200, body: { ...body, id: phoneNumberId } };
    }
    if (request.method !== 'POST') return graphError(400, 100, 'Unsupported request method');
    const json = request.json as Record<string, unknown> | undefined;
    if (!json || typeof json !== 'object')
      return graphError(400, 100, '(#100) The parameter messaging_product is required.');
    if (json.messaging_product !== 'whatsapp') {
      return graphError(400, 100, '(#100) The parameter messaging_product is required.', {
        details: 'messaging_product must be whatsapp',
      });
    }
    const to = typeof json.to === 'string' ? json.to.replace(/^\+/, '') : '';
    if (!/^[0-9]{7,15}$/.test(to))
      return graphError(400, 100, '(#100) Invalid parameter', { details: 'to is invalid' });
    const text = json.text as { body?: unknown } | undefined;
    if (json.type !== 'text' || typeof text?.body !== 'string' || !text.body) {
      return graphError(400, 100, "(#100) The parameter text['body'] is required.");
    }
    if (text.body.length > 4096) {
      return graphError(400, 100, "(#100) Param text['body'] must be at most 4096 characters long.");
    }
    if (undeliverable.has(to)) {
      return graphError(400, 131026, 'Message Undeliverable.', {
        details: 'Message failed to send because the recipient is not on WhatsApp or cannot receive it.',
      });
    }
    sent.push({ to, body: text.body });
    return {
      status: 200,
      body: {
        messaging_product: 'whatsapp',
        contacts: [{ input: json.to, wa_id: to }],
        messages: [{ id: `wamid.HBgL${to}${String(sent.length).padStart(4, '0')}` }],
      },
    };
  });
  return Object.assign(peer, { token, phoneNumberId, undeliverable, sent });
}
