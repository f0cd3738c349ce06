/**
 * A Zendesk Support API v2 peer (`base_url` = its url): basic auth `{email}/token:{api_token}`
 * checked as Zendesk does (no credentials: `users/me` answers the anonymous user and other calls
 * 401; wrong ones: 401 `{"error":"Couldn't authenticate you"}`), `users/me.json`,
 * `tickets.json` (create: 201, 400 for an unparsable body, 422 `RecordInvalid` without a comment)
 * and `tickets/{id}.json` (404 `RecordNotFound`). Faults come from the vendor peer underneath.
 */
import { startVendorPeer, type PeerAnswer, type PeerRequest, type VendorPeer } from './vendor-peer.js';

export interface ZendeskTicket {
  id: number;
  subject: string;
  description: string;
  /** Whether the first comment is public (Zendesk e-mails a public comment to the requester). */
  public: boolean;
  status: string;
  priority: string | null;
  requester: { name?: string; email?: string } | null;
}

export interface FakeZendesk extends VendorPeer {
  baseUrl: string;
  email: string;
  token: string;
  tickets: ZendeskTicket[];
}

const UNAUTHENTICATED: PeerAnswer = { status: 401, body: { error: "Couldn't authenticate you" } };

export async function startFakeZendesk(
  email = 'agent@acme.test',
  token = 'zendesk-peer-token-0000000000000001',
): Promise<FakeZendesk> {
  const tickets: ZendeskTicket[] = [];
  const expected = `Basic ${Buffer.from(`${email}/token:${token}`).toString('base64')}`;
  const peer = await startVendorPeer((request: PeerRequest): PeerAnswer => {
    const auth = request.headers.authorization;
    const path = request.path.split('?')[0]!;
    if (!auth && request.method === 'GET' && path === '/api/v2/users/me.json') {
      return {
        status: 200,
        body: { user: { id: null, url: null, name: 'Anonymous user', email: 'invalid@example.com' } },
      };
    }
    if (auth !== expected) return UNAUTHENTICATED;
    if (request.method === 'GET' && path === '/api/v2/users/me.json') {
      return {
        status: 200,
        body: { user: { id: 361, name: 'Switchboard Agent', email, role: 'agent', active: true } },
      };
    }
    if (request.method === 'POST' && path === '/api/v2/tickets.json') {
      if (request.body && request.json === undefined) {
        return { status: 400, body: { error: 'Unprocessable Entity', description: 'Server could not parse JSON' } };
      }
      const ticket = (request.json as { ticket?: Record<string, unknown> } | undefined)?.ticket;
      const comment = ticket?.comment as { body?: unknown; public?: unknown } | undefined;
      if (!ticket || typeof comment?.body !== 'string' || !comment.body) {
        return {
          status: 422,
          body: {
            error: 'RecordInvalid',
            description: 'Record validation errors',
            details: { description: [{ description: 'Description: cannot be blank', error: 'BlankValue' }] },
          },
        };
      }
      const created: ZendeskTicket = {
        id: 100 + tickets.length + 1,
        subject: String(ticket.subject ?? ''),
        description: comment.body,
        // Zendesk's default: a comment is public unless `public: false`.
        public: comment.public !== false,
        status: 'new',
        priority: typeof ticket.priority === 'string' ? ticket.priority : null,
        requester: (ticket.requester as ZendeskTicket['requester']) ?? null,
      };
      tickets.push(created);
      const { requester: _requester, ...shown } = created;
      return {
        status: 201,
        headers: { location: `${peer.url}/api/v2/tickets/${created.id}.json` },
        body: { ticket: { ...shown, requester_id: 9001, created_at: '2026-01-01T00:00:00Z' }, audit: { id: 1 } },
      };
    }
    const match = /^\/api\/v2\/tickets\/(\d+)\.json$/.exec(path);
    if (request.method === 'GET' && match) {
      const ticket = tickets.find((candidate) => candidate.id === Number(match[1]));
      if (!ticket) return { status: 404, body: { error: 'RecordNotFound', description: 'Not found' } };
      const { requester: _requester, ...shown } = ticket;
      return { status: 200, body: { ticket: { ...shown, updated_at: '2026-01-02T00:00:00Z' } } };
    }
    return { status: 404, body: { error: 'InvalidEndpoint', description: 'Not found' } };
  });
  return Object.assign(peer, { baseUrl: peer.url, email, token, tickets });
}
