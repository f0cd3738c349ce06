/**
 * Zendesk Support API v2 (help desk): `GET /api/v2/users/me.json` checks the credentials (basic
 * auth `{email}/token:{api_token}`; Zendesk answers an unauthenticated call with the anonymous
 * user, a wrong token with 401 `{"error":"Couldn't authenticate you"}`), `POST /api/v2/tickets.json`
 * opens a ticket with the transcript as its first comment — an internal note (`public: false`),
 * so the requester is not e-mailed the escalation reason and transcript — `GET /api/v2/tickets/{id}.json` reads
 * its status (404 `RecordNotFound` is an answer, not a failure). Errors are `{error, description}`
 * (422 adds `details`); 429 carries Retry-After.
 */
import { Type } from '@sinclair/typebox';
import { ConnectorError, type ConnectorContext, type ConnectorDefinition } from '../../../ports/connectors.js';
import { BaseUrl, Email, SecretText, apiRoot } from '../fields.js';
import { commonErrorMessage, type ConnectorHttp } from '../http.js';

export interface ZendeskConfig {
  subdomain: string;
  email: string;
  api_token: string;
  base_url?: string;
}

const VENDOR = 'Zendesk';

/** The words of Zendesk's error shapes: `{error, description, details}` or `{error: {title, message}}`. */
export function zendeskErrorMessage(body: unknown): string | undefined {
  if (!body || typeof body !== 'object') return commonErrorMessage(body);
  const { error, description, details } = body as Record<string, unknown>;
  if (typeof error !== 'string') return commonErrorMessage(body);
  const parts = [error];
  if (typeof description === 'string' && description) parts.push(description);
  if (details && typeof details === 'object') {
    const first = Object.entries(details as Record<string, unknown>)
      .flatMap(([field, list]) => (Array.isArray(list) ? list.map((item) => [field, item] as const) : []))
      .map(([field, item]) => `${field} ${String((item as { description?: unknown }).description ?? '')}`.trim())
      .slice(0, 3);
    if (first.length) parts.push(first.join('; '));
  }
  return parts.join(': ');
}

interface ZendeskTicket {
  id?: number;
  subject?: string | null;
  status?: string;
  priority?: string | null;
  updated_at?: string;
  created_at?: string;
}

export function zendeskConnector(http: ConnectorHttp): ConnectorDefinition<ZendeskConfig> {
  function call(method: 'GET' | 'POST', path: string, context: ConnectorContext<ZendeskConfig>, json?: unknown) {
    const { config } = context;
    const basic = Buffer.from(`${config.email}/token:${config.api_token}`, 'utf8').toString('base64');
    return http.request({
      vendor: VENDOR,
      method,
      url: `${apiRoot(config, `https://${config.subdomain}.zendesk.com`)}/api/v2/${path}`,
      headers: { authorization: `Basic ${basic}` },
      json,
      signal: context.signal,
      errorMessage: zendeskErrorMessage,
    });
  }

  function ticketOf(body: unknown, status: number): ZendeskTicket {
    const ticket = (body as { ticket?: ZendeskTicket } | undefined)?.ticket;
    if (!ticket || typeof ticket !== 'object' || typeof ticket.id !== 'number') {
      throw new ConnectorError(VENDOR, 'unexpected answer: no ticket in it', { status, retryable: false });
    }
    return ticket;
  }

  return {
    type: 'zendesk',
    name: VENDOR,
    description:
      'Help desk: open a ticket with the conversation when a customer asks for a person; read a ticket status.',
    listed: true,
    secretKeys: ['api_token'],
    config: Type.Object(
      {
        subdomain: Type.String({
          pattern: '^[a-z0-9][a-z0-9-]{0,62}$',
          maxLength: 63,
          description: 'The account subdomain: acme for acme.zendesk.com.',
        }),
        email: Email('The agent e-mail the API token belongs to.'),
        api_token: SecretText('Zendesk API token'),
        base_url: BaseUrl('https://{subdomain}.zendesk.com'),
      },
      { additionalProperties: false },
    ),
    async test(context) {
      const answer = await call('GET', 'users/me.json', context);
      const user = (answer.body as { user?: { id?: number | null; name?: string; role?: string } } | undefined)?.user;
      if (!user || typeof user.id !== 'number') {
        // Zendesk answers the anonymous user when the credentials were not taken into account.
        throw new ConnectorError(VENDOR, 'the credentials were not accepted (answered as the anonymous user)', {
          status: answer.status,
          retryable: false,
        });
      }
      const role = user.role ? ` (${user.role})` : '';
      return { detail: `Connected to Zendesk ${context.config.subdomain} as ${user.name ?? user.id}${role}` };
    },
    tools: () => [
      {
        name: 'create_ticket',
        description:
          'Open a Zendesk ticket for the support team, with the conversation transcript as its first comment, an internal note the customer does not receive (use it to hand the customer to a person).',
        input: Type.Object(
          {
            subject: Type.String({ minLength: 1, maxLength: 250, description: 'Short subject line.' }),
            body: Type.String({
              minLength: 1,
              maxLength: 60000,
              description: 'The first comment: the escalation reason and the conversation transcript.',
            }),
            requester_email: Type.Optional(
              Type.String({ format: 'email', maxLength: 320, description: "The customer's e-mail, when known." }),
            ),
            requester_name: Type.Optional(
              Type.String({ minLength: 1, maxLength: 200, description: "The customer's name (with the e-mail)." }),
            ),
            priority: Type.Optional(
              Type.Union([Type.Literal('low'), Type.Literal('normal'), Type.Literal('high'), Type.Literal('urgent')], {
                description: 'Ticket priority.',
              }),
            ),
          },
          { additionalProperties: false },
        ),
        notification: 'api_call',
        async run(input, context) {
          const ticket: Record<string, unknown> = {
            subject: String(input.subject),
            // An internal note: the reason and transcript are for the team, never e-mailed to the requester.
            comment: { body: String(input.body), public: false },
          };
          if (typeof input.requester_email === 'string') {
            ticket.requester = {
              email: input.requester_email,
              ...(typeof input.requester_name === 'string' ? { name: input.requester_name } : {}),
            };
          }
          if (typeof input.priority === 'string') ticket.priority = input.priority;
          const answer = await call('POST', 'tickets.json', context, { ticket });
          const created = ticketOf(answer.body, answer.status);
          return {
            summary: `Opened ticket #${created.id}`,
            data: { id: created.id, status: created.status ?? null, priority: created.priority ?? null },
          };
        },
      },
      {
        name: 'get_ticket_status',
        description: 'Read the status of a Zendesk ticket by its number.',
        input: Type.Object(
          { ticket_id: Type.Integer({ minimum: 1, maximum: 2 ** 53 - 1, description: 'The ticket number.' }) },
          { additionalProperties: false },
        ),
        notification: 'tool_usage',
        async run(input, context) {
          const id = Number(input.ticket_id);
          let answer;
          try {
            answer = await call('GET', `tickets/${id}.json`, context);
          } catch (error) {
            if (error instanceof ConnectorError && error.status === 404) {
              return { summary: `Ticket #${id} not found`, data: { id, found: false } };
            }
            throw error;
          }
          const ticket = ticketOf(answer.body, answer.status);
          return {
            summary: `Ticket #${id}: ${ticket.status ?? 'unknown status'}`,
            data: {
              id,
              found: true,
              status: ticket.status ?? null,
              priority: ticket.priority ?? null,
              subject: ticket.subject ?? null,
              updated_at: ticket.updated_at ?? null,
            },
          };
        },
      },
    ],
  };
}
