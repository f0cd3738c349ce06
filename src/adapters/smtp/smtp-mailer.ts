/**
 * Mail over SMTP with nodemailer (SMTP_URL). A message the server refuses, or that cannot be
 * sent at all, is kept in the outbox with the error, so nothing is lost.
 */
import nodemailer from 'nodemailer';
import type { Executor } from '../../db/database.js';
import type { Mailer, MailResult } from '../../ports/mailer.js';
import { storeInOutbox } from '../outbox/outbox-mailer.js';

export interface SmtpMailerOptions {
  url: string;
  from: string;
  db: Executor;
  timeoutMs?: number;
  onError?: (error: Error) => void;
}

export function createSmtpMailer(options: SmtpMailerOptions): Mailer {
  const timeout = options.timeoutMs ?? 10_000;
  const url = new URL(options.url);
  const transport = nodemailer.createTransport({
    host: url.hostname,
    port: url.port ? Number(url.port) : url.protocol === 'smtps:' ? 465 : 25,
    secure: url.protocol === 'smtps:',
    auth: url.username ? { user: decodeURIComponent(url.username), pass: decodeURIComponent(url.password) } : undefined,
    connectionTimeout: timeout,
    greetingTimeout: timeout,
    socketTimeout: timeout,
    // Plain SMTP on a private relay is common for self-hosting; STARTTLS is used when offered.
    tls: { rejectUnauthorized: url.searchParams.get('tls_reject_unauthorized') !== 'false' },
  });
  return {
    async send(message): Promise<MailResult> {
      try {
        await transport.sendMail({ from: options.from, to: message.to, subject: message.subject, text: message.text });
        return { via: 'smtp' };
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        options.onError?.(error instanceof Error ? error : new Error(reason));
        await storeInOutbox(options.db, message, reason);
        return { via: 'outbox' };
      }
    },
    async close() {
      transport.close();
    },
  };
}
