/**
 * Invitations over real SMTP: a local SMTP server (the smtp-server package) receives what the
 * service sends through nodemailer; when the server refuses, the message is kept in the outbox.
 */
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './helpers/app.js';
import { createTenant, uniqueEmail } from './helpers/factories.js';

interface Received {
  from: string;
  to: string[];
  data: string;
}

let smtp: SMTPServer;
let received: Received[] = [];
let refuse = false;
let t: TestApp;

beforeAll(async () => {
  smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onRcptTo(address, _session, callback) {
      if (refuse) return callback(Object.assign(new Error('mailbox unavailable'), { responseCode: 550 }));
      callback();
    },
    onData(stream, session, callback) {
      let data = '';
      stream.on('data', (chunk: Buffer) => (data += chunk.toString('utf8')));
      stream.on('end', () => {
        received.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          data,
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
  const port = (smtp.server.address() as AddressInfo).port;
  t = await createTestApp({
    SMTP_URL: `smtp://127.0.0.1:${port}`,
    MAIL_FROM: 'Switchboard <invites@switchboard.test>',
    PUBLIC_BASE_URL: 'https://switchboard.example.test',
  });
});

afterAll(async () => {
  await t.close();
  await new Promise<void>((resolve) => smtp.close(() => resolve()));
});

describe('invitation e-mail over SMTP', () => {
  it('delivers the invitation with its token and accept instructions', async () => {
    received = [];
    const tenant = await createTenant(t.container);
    const email = uniqueEmail('smtp');
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/public/companies/invitations',
      headers: { ...tenant.headers, 'content-type': 'application/json' },
      payload: JSON.stringify({ email, role: 'admin', message: 'Join the support team' }),
    });
    expect(res.statusCode).toBe(201);
    const { token } = res.json() as { token: string };
    expect(received).toHaveLength(1);
    const mail = received[0]!;
    expect(mail.from).toBe('invites@switchboard.test');
    expect(mail.to).toEqual([email]);
    expect(mail.data).toContain('Subject: Invitation to join Company ');
    const body = mail.data.replace(/=\r?\n/g, '');
    expect(body).toContain(token);
    expect(body).toContain('Join the support team');
    expect(body).toContain('https://switchboard.example.test/api/public/companies/invitations/accept');
    const outbox = await t.container.db
      .selectFrom('email_outbox')
      .select('id')
      .where('recipient', '=', email)
      .execute();
    expect(outbox).toEqual([]);
  });

  it("keeps a refused message in the outbox with the server's error, and still creates the invitation", async () => {
    refuse = true;
    try {
      const tenant = await createTenant(t.container);
      const email = uniqueEmail('refused');
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/public/companies/invitations',
        headers: { ...tenant.headers, 'content-type': 'application/json' },
        payload: JSON.stringify({ email }),
      });
      expect(res.statusCode).toBe(201);
      const kept = await t.container.db
        .selectFrom('email_outbox')
        .selectAll()
        .where('recipient', '=', email)
        .executeTakeFirstOrThrow();
      expect(kept.kind).toBe('invitation');
      expect(kept.error).toContain('550');
      expect(kept.body_text).toContain((res.json() as { token: string }).token);
    } finally {
      refuse = false;
    }
  });
});
