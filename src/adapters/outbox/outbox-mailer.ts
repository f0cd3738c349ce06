/** Mail without SMTP: every message is written to the email_outbox table. */
import type { Executor } from '../../db/database.js';
import type { MailMessage, Mailer, MailResult } from '../../ports/mailer.js';

export async function storeInOutbox(db: Executor, message: MailMessage, error: string | null = null): Promise<void> {
  await db
    .insertInto('email_outbox')
    .values({
      company_id: message.companyId ?? null,
      recipient: message.to,
      subject: message.subject,
      body_text: message.text,
      kind: message.kind,
      error,
    })
    .execute();
}

export function createOutboxMailer(db: Executor): Mailer {
  return {
    async send(message): Promise<MailResult> {
      await storeInOutbox(db, message);
      return { via: 'outbox' };
    },
    async close() {},
  };
}
