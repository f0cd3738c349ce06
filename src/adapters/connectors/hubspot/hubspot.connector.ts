/**
 * HubSpot CRM v3 (bearer private-app token): `GET /crm/v3/objects/contacts?limit=1` checks the
 * token, `POST /crm/v3/objects/contacts/search` finds a contact by e-mail (EQ filter), and
 * `POST /crm/v3/objects/notes` logs a note (`hs_note_body`, `hs_timestamp`) associated to the
 * contact (HUBSPOT_DEFINED type 202, note to contact). Errors are
 * `{status:"error", message, correlationId, category}`; 429 carries Retry-After.
 */
import { Type } from '@sinclair/typebox';
import { ConnectorError, type ConnectorContext, type ConnectorDefinition } from '../../../ports/connectors.js';
import { BaseUrl, SecretText, apiRoot } from '../fields.js';
import { commonErrorMessage, type ConnectorHttp } from '../http.js';

export interface HubspotConfig {
  access_token: string;
  portal_id?: string;
  base_url?: string;
}

const VENDOR = 'HubSpot';
/** HubSpot-defined association type of a note to a contact. */
export const NOTE_TO_CONTACT = 202;
const CONTACT_PROPERTIES = ['email', 'firstname', 'lastname', 'phone', 'company'];

/** The words of HubSpot's error shape: its message, with the category (`INVALID_AUTHENTICATION` …). */
export function hubspotErrorMessage(body: unknown): string | undefined {
  if (!body || typeof body !== 'object') return commonErrorMessage(body);
  const { message, category } = body as Record<string, unknown>;
  if (typeof message !== 'string') return commonErrorMessage(body);
  return typeof category === 'string' && category ? `${message} (${category})` : message;
}

/** HubSpot's limit on a text property such as `hs_note_body`, in characters. */
export const MAX_NOTE_BODY = 65_536;
const NOTE_CUT = '<br>… (cut: the note was longer than HubSpot allows)';
const HTML_OF: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '\n': '<br>' };

/**
 * Note bodies are HTML in HubSpot: the text is escaped and its line breaks kept. Escaping can
 * make a text within the tool's bound longer than HubSpot's limit (`&` is five characters), so
 * the converted body is cut between characters to fit, and says so.
 */
export function noteHtml(text: string): string {
  const normalized = text.replace(/\r\n?/g, '\n');
  const html = normalized.replace(/[&<>\n]/g, (char) => HTML_OF[char]!);
  if (html.length <= MAX_NOTE_BODY) return html;
  const room = MAX_NOTE_BODY - NOTE_CUT.length;
  let length = 0;
  const pieces: string[] = [];
  for (const char of normalized) {
    const piece = HTML_OF[char] ?? char;
    if (length + piece.length > room) break;
    pieces.push(piece);
    length += piece.length;
  }
  return `${pieces.join('')}${NOTE_CUT}`;
}

interface HubspotObject {
  id?: string;
  properties?: Record<string, string | null>;
}

export function hubspotConnector(http: ConnectorHttp): ConnectorDefinition<HubspotConfig> {
  function call(method: 'GET' | 'POST', path: string, context: ConnectorContext<HubspotConfig>, json?: unknown) {
    return http.request({
      vendor: VENDOR,
      method,
      url: `${apiRoot(context.config, 'https://api.hubapi.com')}${path}`,
      headers: { authorization: `Bearer ${context.config.access_token}` },
      json,
      signal: context.signal,
      errorMessage: hubspotErrorMessage,
    });
  }

  return {
    type: 'hubspot',
    name: VENDOR,
    description: 'CRM: find a contact by e-mail and log a note of the conversation on it.',
    listed: true,
    secretKeys: ['access_token'],
    config: Type.Object(
      {
        access_token: SecretText('Private app access token'),
        portal_id: Type.Optional(
          Type.String({ pattern: '^[0-9]{1,20}$', description: 'The HubSpot account (hub) id.' }),
        ),
        base_url: BaseUrl('https://api.hubapi.com'),
      },
      { additionalProperties: false },
    ),
    async test(context) {
      const answer = await call('GET', '/crm/v3/objects/contacts?limit=1&archived=false', context);
      if (!Array.isArray((answer.body as { results?: unknown } | undefined)?.results)) {
        throw new ConnectorError(VENDOR, 'unexpected answer to the contacts list', {
          status: answer.status,
          retryable: false,
        });
      }
      const portal = context.config.portal_id ? ` account ${context.config.portal_id}` : '';
      return { detail: `Connected to HubSpot${portal} (contacts readable)` };
    },
    tools: () => [
      {
        name: 'find_contact',
        description: 'Find a HubSpot contact by e-mail address (name, phone, company and its id).',
        input: Type.Object(
          { email: Type.String({ format: 'email', maxLength: 320, description: "The contact's e-mail." }) },
          { additionalProperties: false },
        ),
        notification: 'tool_usage',
        async run(input, context) {
          const email = String(input.email);
          const answer = await call('POST', '/crm/v3/objects/contacts/search', context, {
            filterGroups: [{ filters: [{ propertyName: 'email', operator: 'EQ', value: email }] }],
            properties: CONTACT_PROPERTIES,
            limit: 1,
          });
          const results = (answer.body as { results?: HubspotObject[] } | undefined)?.results;
          if (!Array.isArray(results)) {
            throw new ConnectorError(VENDOR, 'unexpected answer to the contact search', {
              status: answer.status,
              retryable: false,
            });
          }
          const [contact] = results;
          if (!contact?.id) return { summary: `No contact for ${email}`, data: { found: false, email } };
          const p = contact.properties ?? {};
          const name = [p.firstname, p.lastname].filter(Boolean).join(' ');
          return {
            summary: `Found contact ${name || email} (${contact.id})`,
            data: {
              found: true,
              id: contact.id,
              email: p.email ?? email,
              firstname: p.firstname ?? null,
              lastname: p.lastname ?? null,
              phone: p.phone ?? null,
              company: p.company ?? null,
            },
          };
        },
      },
      {
        name: 'log_note',
        description: 'Log a note (for example a summary of the conversation) on a HubSpot contact, by contact id.',
        input: Type.Object(
          {
            contact_id: Type.String({ pattern: '^[0-9]{1,20}$', description: 'The contact id (from find_contact).' }),
            text: Type.String({ minLength: 1, maxLength: 60000, description: 'The note.' }),
          },
          { additionalProperties: false },
        ),
        notification: 'api_call',
        async run(input, context) {
          const contactId = String(input.contact_id);
          const answer = await call('POST', '/crm/v3/objects/notes', context, {
            properties: { hs_note_body: noteHtml(String(input.text)), hs_timestamp: new Date().toISOString() },
            associations: [
              {
                to: { id: contactId },
                types: [{ associationCategory: 'HUBSPOT_DEFINED', associationTypeId: NOTE_TO_CONTACT }],
              },
            ],
          });
          const note = answer.body as HubspotObject | undefined;
          if (!note?.id) {
            throw new ConnectorError(VENDOR, 'unexpected answer: no note id', {
              status: answer.status,
              retryable: false,
            });
          }
          return {
            summary: `Logged note ${note.id} on contact ${contactId}`,
            data: { id: note.id, contact_id: contactId },
          };
        },
      },
    ],
  };
}
