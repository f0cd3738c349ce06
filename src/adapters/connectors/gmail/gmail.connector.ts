/**
 * Gmail API `users.messages.send` with a service account acting as the configured sender
 * (domain-wide delegation: the JWT assertion's `sub` is the sender, scope `auth/gmail.send`, and
 * `userId` is `me`). The RFC 2822 message is composed by nodemailer's MailComposer (headers
 * From/To/Subject, RFC 2047-encoded when not ASCII, text/plain UTF-8) and sent base64url-encoded
 * as `{raw}`. The live check is the token grant itself: `gmail.send` is the only scope asked for,
 * and it does not allow reading the profile (`users.getProfile` needs a read or compose scope),
 * so a successful grant for the sender with that scope is what proves the setup.
 */
import { Type } from '@sinclair/typebox';
import MailComposer from 'nodemailer/lib/mail-composer/index.js';
import { ConnectorError, type ConnectorDefinition } from '../../../ports/connectors.js';
import { BaseUrl, Email, ServiceAccountCredentials, apiRoot } from '../fields.js';
import type { GoogleApi } from '../google-api.js';
import type { GoogleTokens, ServiceAccountKey } from '../google-auth.js';
import { credentialsProblem } from '../google_calendar/google-calendar.connector.js';

export type GmailConfig = {
  sender: string;
  credentials: ServiceAccountKey;
  base_url?: string;
};

const VENDOR = 'Gmail';
const SCOPES = ['https://www.googleapis.com/auth/gmail.send'];
/** One plain address: no display name, no list, nothing a header could be injected through. */
const ADDRESS =
  /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/;

/**
 * The RFC 5322 message Gmail sends, as text: every line ends in CRLF (the body's bare LF and CR
 * line breaks included; RFC 5322 §2.3 allows no other).
 */
export async function composeMessage(mail: { from: string; to: string; subject: string; text: string }) {
  const message = await new MailComposer({
    from: mail.from,
    to: mail.to,
    subject: mail.subject,
    text: mail.text.replace(/\r\n|\r|\n/g, '\r\n'),
    textEncoding: 'quoted-printable',
  })
    .compile()
    .build();
  return message.toString('utf8').replace(/\r?\n/g, '\r\n');
}

export function gmailConnector(google: GoogleApi, tokens: GoogleTokens): ConnectorDefinition<GmailConfig> {
  return {
    type: 'gmail',
    name: VENDOR,
    description: 'E-mail through Google Workspace: send an e-mail as the configured sender.',
    listed: true,
    secretKeys: ['credentials'],
    config: Type.Object(
      {
        sender: Email('The mailbox mail is sent as (domain-wide delegation).'),
        credentials: ServiceAccountCredentials,
        base_url: BaseUrl('https://gmail.googleapis.com'),
      },
      { additionalProperties: false },
    ),
    refine: (config) => credentialsProblem(config.credentials),
    async test(context) {
      await tokens.accessToken({
        vendor: VENDOR,
        credentials: context.config.credentials,
        scopes: SCOPES,
        subject: context.config.sender,
        signal: context.signal,
      });
      return {
        detail: `Authorised to send Gmail as ${context.config.sender} (service account ${context.config.credentials.client_email})`,
      };
    },
    tools: (config) => [
      {
        name: 'send_email',
        description: `Send a plain-text e-mail from ${config.sender} to one address.`,
        input: Type.Object(
          {
            to: Type.String({ format: 'email', maxLength: 320, description: 'The one recipient address.' }),
            subject: Type.String({ minLength: 1, maxLength: 300, description: 'The subject line.' }),
            body: Type.String({ minLength: 1, maxLength: 20_000, description: 'The message, plain text.' }),
          },
          { additionalProperties: false },
        ),
        notification: 'email_sent',
        async run(input, context) {
          const to = String(input.to).trim();
          if (to.length > 320 || !ADDRESS.test(to)) {
            throw new ConnectorError(VENDOR, 'to must be one e-mail address', {
              retryable: false,
              code: 'invalid_input',
            });
          }
          const subject = String(input.subject)
            .replace(/[\r\n]+/g, ' ')
            .trim()
            .slice(0, 300);
          const raw = await composeMessage({
            from: context.config.sender,
            to,
            subject,
            text: String(input.body),
          });
          const answer = await google.request({
            vendor: VENDOR,
            credentials: context.config.credentials,
            scopes: SCOPES,
            subject: context.config.sender,
            method: 'POST',
            url: `${apiRoot(context.config, 'https://gmail.googleapis.com')}/gmail/v1/users/me/messages/send`,
            json: { raw: Buffer.from(raw, 'utf8').toString('base64url') },
            signal: context.signal,
          });
          const sent = (answer.body ?? {}) as { id?: unknown; threadId?: unknown };
          return {
            summary: `E-mail sent to ${to}: ${subject}`,
            data: {
              recipient_email: to,
              email_subject: subject,
              id: typeof sent.id === 'string' ? sent.id : null,
              thread_id: typeof sent.threadId === 'string' ? sent.threadId : null,
            },
          };
        },
      },
    ],
  };
}
