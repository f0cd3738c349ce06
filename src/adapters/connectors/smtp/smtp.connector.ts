/**
 * E-mail through any SMTP server (nodemailer). The host is resolved and checked against the
 * network policy first, then nodemailer connects to that checked address (the name is kept for
 * TLS verification), so a name cannot point the connection into the private network. `verify()`
 * (connect, EHLO, STARTTLS when offered, AUTH) is the test; the tool sends one plain-text mail.
 */
import { isIP } from 'node:net';
import { Type } from '@sinclair/typebox';
import nodemailer from 'nodemailer';
import { startTimeLimit } from '../../../lib/abort-limit.js';
import { ConnectorError, type ConnectorContext, type ConnectorDefinition } from '../../../ports/connectors.js';
import { Email, SecretText, Text } from '../fields.js';
import { resolveAllowed, type ResolveAddresses } from '../network-guard.js';

export interface SmtpConfig {
  host: string;
  port?: number;
  secure?: boolean;
  /** Default true: without TLS from the start, STARTTLS is required before signing in or sending. */
  require_tls?: boolean;
  username?: string;
  password?: string;
  from: string;
}

export interface SmtpConnectorOptions {
  allowPrivate: boolean;
  timeoutMs: number;
  resolve?: ResolveAddresses;
}

const VENDOR = 'SMTP';

interface SmtpFailure extends Error {
  code?: string;
  responseCode?: number;
  response?: string;
}

/** Connection-level trouble and 4xx replies may pass; refused credentials, TLS and 5xx replies will not. */
export function smtpError(error: SmtpFailure, host: string): ConnectorError {
  if (error instanceof ConnectorError) return error;
  const status = typeof error.responseCode === 'number' ? error.responseCode : undefined;
  const reply = error.response ? `: ${error.response.replace(/\s+/g, ' ').slice(0, 200)}` : '';
  const code = error.code;
  if (code === 'EAUTH') {
    return new ConnectorError(VENDOR, `${host} refused the credentials${reply}`, { status, code, retryable: false });
  }
  if (code === 'ETLS' && /STARTTLS/i.test(error.message) && !/failed/i.test(error.message)) {
    return new ConnectorError(
      VENDOR,
      `${host} does not offer STARTTLS, and TLS is required (set secure for TLS from the start, or require_tls: false for a trusted relay)`,
      { status, code, retryable: false },
    );
  }
  if (code === 'ETLS') {
    return new ConnectorError(VENDOR, `TLS with ${host} failed (${error.message.slice(0, 200)})`, {
      status,
      code,
      retryable: false,
    });
  }
  if (status !== undefined) {
    return new ConnectorError(VENDOR, `${host} answered ${status}${reply}`, {
      status,
      code,
      retryable: status >= 400 && status < 500,
    });
  }
  if (code === 'ETIMEDOUT' || code === 'ECONNECTION' || code === 'ESOCKET' || code === 'EDNS') {
    return new ConnectorError(VENDOR, `could not talk to ${host} (${code}: ${error.message.slice(0, 200)})`, {
      code,
      retryable: true,
    });
  }
  return new ConnectorError(VENDOR, `${host}: ${error.message.slice(0, 200)}`, { code, retryable: false });
}

export function smtpConnector(options: SmtpConnectorOptions): ConnectorDefinition<SmtpConfig> {
  /** Runs `work` on a transport to the checked address, closed afterwards, bounded by the time limit. */
  async function withTransport<T>(
    context: ConnectorContext<SmtpConfig>,
    work: (transport: nodemailer.Transporter) => Promise<T>,
  ): Promise<T> {
    const { config } = context;
    const port = config.port ?? 587;
    let address: string;
    try {
      address = (await resolveAllowed(config.host, options)).address;
    } catch (error) {
      const blocked = (error as NodeJS.ErrnoException).code === 'EBLOCKED';
      throw new ConnectorError(VENDOR, `refused to connect to ${config.host}: ${(error as Error).message}`, {
        retryable: !blocked,
        code: (error as NodeJS.ErrnoException).code,
      });
    }
    const transport = nodemailer.createTransport({
      host: address,
      port,
      secure: config.secure ?? port === 465,
      // Never sign in or send in clear unless the integration says so (a trusted local relay).
      requireTLS: config.require_tls ?? true,
      auth: config.username ? { user: config.username, pass: config.password ?? '' } : undefined,
      connectionTimeout: options.timeoutMs,
      greetingTimeout: options.timeoutMs,
      socketTimeout: options.timeoutMs,
      tls: isIP(config.host) ? {} : { servername: config.host },
      logger: false,
      debug: false,
    });
    const limit = startTimeLimit(context.signal, options.timeoutMs);
    const signal = limit.signal;
    let onAbort: (() => void) | undefined;
    const aborted = new Promise<never>((_, reject) => {
      onAbort = () => {
        transport.close();
        reject(
          limit.timedOut
            ? new ConnectorError(VENDOR, `no answer from ${config.host} within ${options.timeoutMs} ms`, {
                retryable: true,
              })
            : (context.signal.reason as Error),
        );
      };
      if (signal.aborted) onAbort();
      else signal.addEventListener('abort', onAbort, { once: true });
    });
    try {
      return await Promise.race([work(transport), aborted]);
    } catch (error) {
      throw smtpError(error as SmtpFailure, config.host);
    } finally {
      if (onAbort) signal.removeEventListener('abort', onAbort);
      limit.release();
      aborted.catch(() => undefined);
      transport.close();
    }
  }

  return {
    type: 'smtp',
    name: 'SMTP e-mail',
    description: 'E-mail through your own mail server: send an e-mail (escalations, confirmations).',
    listed: true,
    secretKeys: ['password'],
    config: Type.Object(
      {
        host: Type.String({
          maxLength: 253,
          pattern: '^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?$|^\\[?[0-9a-fA-F:.]+\\]?$',
          description: 'The mail server name or address.',
        }),
        port: Type.Optional(Type.Integer({ minimum: 1, maximum: 65535, description: 'Default 587.' })),
        secure: Type.Optional(
          Type.Boolean({ description: 'TLS from the start (default on port 465); else STARTTLS (see require_tls).' }),
        ),
        require_tls: Type.Optional(
          Type.Boolean({
            description:
              'Default true: when not secure, STARTTLS is required before signing in or sending (a server that does not offer it is refused). false only for a trusted relay without TLS.',
          }),
        ),
        username: Type.Optional(Text(320)),
        password: Type.Optional(SecretText('SMTP password')),
        from: Type.String({
          minLength: 3,
          maxLength: 320,
          pattern: '^[^\\r\\n]*<?[^\\s@<>]+@[^\\s@<>]+>?$',
          description: 'Sender: address or "Name <address>".',
        }),
      },
      { additionalProperties: false },
    ),
    refine: (config) =>
      config.password !== undefined && config.username === undefined
        ? { key: 'username', problem: 'is required when a password is set' }
        : undefined,
    async test(context) {
      await withTransport(context, (transport) => transport.verify());
      return {
        detail: `Connected to ${context.config.host}:${context.config.port ?? 587}${context.config.username ? ' and signed in' : ''}`,
      };
    },
    tools: () => [
      {
        name: 'send_email',
        description: 'Send a plain-text e-mail (for example the conversation to the escalation address).',
        input: Type.Object(
          {
            to: Email('Recipient address.'),
            subject: Type.String({ minLength: 1, maxLength: 250 }),
            text: Type.String({ minLength: 1, maxLength: 50_000 }),
          },
          { additionalProperties: false },
        ),
        notification: 'email_sent',
        async run(input, context) {
          const to = String(input.to);
          const info = (await withTransport(context, (transport) =>
            transport.sendMail({
              from: context.config.from,
              to,
              subject: String(input.subject),
              text: String(input.text),
            }),
          )) as { messageId?: string; accepted?: unknown[]; rejected?: unknown[] };
          return {
            summary: `E-mail sent to ${to}`,
            data: { message_id: info.messageId ?? null, accepted: info.accepted ?? [], rejected: info.rejected ?? [] },
          };
        },
      },
    ],
  };
}
