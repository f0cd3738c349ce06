/**
 * WhatsApp Cloud API (business messaging, not listed): the Graph API at
 * `{root}/{api_version}/{phone_number_id}` with a bearer system-user token. `test()` reads the
 * phone number (`display_phone_number`, `verified_name`); `send_message` posts a text message to
 * `/messages`. Graph errors are `{error: {message, type, code, error_data: {details},
 * error_subcode, fbtrace_id}}`; the `code` decides, not the HTTP status (Meta's advice): 0/190
 * token refused or expired, 10 and 200–299 permissions, 4/80007/130429/131056 rate limits
 * (retryable), 1/2/131000/131016/133004 passing trouble (retryable), the rest final.
 */
import { Type } from '@sinclair/typebox';
import { ConnectorError, type ConnectorContext, type ConnectorDefinition } from '../../../ports/connectors.js';
import { BaseUrl, SecretText, apiRoot } from '../fields.js';
import { errorForStatus, retryAfterMs, type ConnectorHttp, type HttpAnswer } from '../http.js';

export interface WhatsappConfig {
  access_token: string;
  phone_number_id: string;
  /** The Meta app's secret: verifies webhook notifications (X-Hub-Signature-256) of a `whatsapp` deployment. */
  app_secret?: string;
  /** The token Meta echoes in the webhook's verification request (hub.verify_token). */
  verify_token?: string;
  api_version?: string;
  base_url?: string;
}

const VENDOR = 'WhatsApp';
/** A Graph API version current at the time of writing; set `api_version` to pin another. */
export const WHATSAPP_DEFAULT_API_VERSION = 'v23.0';
const MAX_TEXT = 4096;

interface GraphError {
  message?: string;
  type?: string;
  code?: number;
  error_subcode?: number;
  error_data?: { details?: string };
  fbtrace_id?: string;
}

const AUTH_CODES = new Set([0, 190]);
const RATE_LIMIT_CODES = new Set([4, 80007, 130429, 131056]);
const PASSING_CODES = new Set([1, 2, 131000, 131016, 133004]);

const HINTS: Record<number, string> = {
  0: 'the access token could not be authenticated',
  190: 'the access token is invalid or has expired',
  10: 'the token lacks a permission (whatsapp_business_messaging)',
  4: 'the app reached its API call rate limit',
  80007: 'the WhatsApp Business Account reached its rate limit',
  130429: 'the phone number reached its message throughput',
  131056: 'too many messages to this recipient in a short time',
  131026: 'the message could not be delivered to this number',
  131047: 'more than 24 hours since the customer last wrote: only a template message can be sent',
  131030: 'the recipient is not in the allowed list of a test number',
  100: 'a parameter was refused',
};

/** The ConnectorError of a Graph error answer, from its `code` (undefined when the body has none). */
export function whatsappError(
  status: number,
  body: unknown,
  headers: HttpAnswer['headers'] = {},
): ConnectorError | undefined {
  const error = (body as { error?: GraphError } | undefined)?.error;
  if (!error || typeof error !== 'object' || typeof error.code !== 'number') return undefined;
  const code = error.code;
  const hint = HINTS[code] ?? (code >= 200 && code <= 299 ? 'the token lacks a permission' : undefined);
  const words = [error.message, error.error_data?.details].filter(Boolean).join(' — ').slice(0, 300);
  const message = `Graph error ${code}${hint ? ` (${hint})` : ''} (HTTP ${status}): ${words || 'no message'}`;
  const retryable = RATE_LIMIT_CODES.has(code) || PASSING_CODES.has(code);
  return new ConnectorError(VENDOR, message, {
    status: AUTH_CODES.has(code) ? 401 : status,
    code: String(code),
    retryable,
    retryAfterMs: retryable ? retryAfterMs(headers['retry-after']) : undefined,
  });
}

/** E.164 without the plus: 7 to 15 digits, no leading zero. */
export function whatsappRecipient(to: string): string {
  const digits = to.replace(/^\+/, '');
  if (!/^[1-9][0-9]{6,14}$/.test(digits)) {
    throw new ConnectorError(
      VENDOR,
      'the recipient must be an international number in E.164 form (e.g. +14155550123)',
      {
        retryable: false,
        code: 'invalid_recipient',
      },
    );
  }
  return digits;
}

export function whatsappConnector(http: ConnectorHttp): ConnectorDefinition<WhatsappConfig> {
  async function call(
    method: 'GET' | 'POST',
    path: string,
    context: ConnectorContext<WhatsappConfig>,
    json?: Record<string, unknown>,
  ) {
    const { config } = context;
    const version = config.api_version ?? WHATSAPP_DEFAULT_API_VERSION;
    const answer = await http.request({
      vendor: VENDOR,
      method,
      url: `${apiRoot(config, 'https://graph.facebook.com')}/${version}/${encodeURIComponent(config.phone_number_id)}${path}`,
      headers: { authorization: `Bearer ${config.access_token}` },
      json,
      signal: context.signal,
      errorFor: (status, body, headers) =>
        whatsappError(status, body, headers) ?? errorForStatus(VENDOR, status, undefined, headers),
    });
    if (!answer.body || typeof answer.body !== 'object') {
      throw new ConnectorError(VENDOR, 'unexpected answer (not a JSON object)', {
        status: answer.status,
        retryable: false,
      });
    }
    return answer.body as Record<string, unknown>;
  }

  return {
    type: 'whatsapp',
    name: 'WhatsApp Business',
    description: "Business messaging: send a message to a customer's number.",
    listed: false,
    secretKeys: ['access_token', 'app_secret', 'verify_token'],
    config: Type.Object(
      {
        access_token: SecretText('System-user access token'),
        phone_number_id: Type.String({ pattern: '^[0-9]{1,30}$', description: 'The sending phone number id.' }),
        api_version: Type.Optional(
          Type.String({
            pattern: '^v[0-9]{1,3}\\.[0-9]{1,2}$',
            description: `Graph API version, e.g. v21.0 (default ${WHATSAPP_DEFAULT_API_VERSION}).`,
          }),
        ),
        app_secret: Type.Optional(
          SecretText("The Meta app's secret (App settings › Basic), needed to deploy on WhatsApp"),
        ),
        verify_token: Type.Optional(
          SecretText('A token of your choice, entered as the Verify token of the webhook in the Meta app dashboard'),
        ),
        base_url: BaseUrl('https://graph.facebook.com'),
      },
      { additionalProperties: false },
    ),
    async test(context) {
      const data = await call('GET', '?fields=display_phone_number,verified_name', context);
      const number =
        typeof data.display_phone_number === 'string' ? data.display_phone_number : context.config.phone_number_id;
      const name = typeof data.verified_name === 'string' ? ` (${data.verified_name})` : '';
      return { detail: `Connected to WhatsApp Business number ${number}${name}` };
    },
    tools: () => [
      {
        name: 'send_message',
        description:
          "Send a WhatsApp text message to a customer's phone number (international form, e.g. +14155550123). Only works within 24 hours of the customer's last message to the business.",
        input: Type.Object(
          {
            to: Type.String({
              pattern: '^\\+?[1-9][0-9]{6,14}$',
              description: 'Recipient number in E.164 form, with or without the leading +.',
            }),
            text: Type.String({ minLength: 1, maxLength: MAX_TEXT, description: 'The message text.' }),
          },
          { additionalProperties: false },
        ),
        notification: 'api_call',
        async run(input, context) {
          const to = whatsappRecipient(String(input.to ?? ''));
          const text = String(input.text ?? '');
          if (!text.trim() || text.length > MAX_TEXT) {
            throw new ConnectorError(VENDOR, `the message must be 1 to ${MAX_TEXT} characters`, {
              retryable: false,
              code: 'invalid_text',
            });
          }
          const data = await call('POST', '/messages', context, {
            messaging_product: 'whatsapp',
            recipient_type: 'individual',
            to,
            type: 'text',
            text: { preview_url: false, body: text },
          });
          const messages = Array.isArray(data.messages) ? (data.messages as { id?: unknown }[]) : [];
          const contacts = Array.isArray(data.contacts) ? (data.contacts as { wa_id?: unknown }[]) : [];
          const id = typeof messages[0]?.id === 'string' ? messages[0].id : null;
          if (!id) throw new ConnectorError(VENDOR, 'the answer carried no message id', { retryable: false });
          const waId = typeof contacts[0]?.wa_id === 'string' ? contacts[0].wa_id : to;
          return { summary: `Sent a WhatsApp message to +${waId}`, data: { message_id: id, wa_id: waId } };
        },
      },
    ],
  };
}
