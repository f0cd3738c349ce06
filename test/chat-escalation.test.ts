/**
 * Escalation e-mails: a job enqueued with the turn mails the transcript and notifies the team.
 * The job is read from the queue and run by this test's container (workers of other test files
 * share the queue, so this file runs none of its own).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './helpers/app.js';
import type { EscalationEmailJob } from '../src/modules/chat/chat.escalation.js';
import { chat, chatSetup } from './helpers/chat.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t?.close());

/** The escalation job the turn enqueued for this company, run as the worker would. */
async function runEscalationJob(companyId: string) {
  const jobs = await t.container.queue.boss
    .getDb()
    .executeSql(
      `select data from ${t.container.config.jobsSchema}.job where name = 'chat.escalation-email' and data->>'companyId' = $1`,
      [companyId],
    );
  expect(jobs.rows).toHaveLength(1);
  await t.container.chat.sendEscalationEmail((jobs.rows[0] as { data: EscalationEmailJob }).data);
}

async function eventually<T>(read: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('not seen in time');
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe('escalation e-mail', () => {
  it('mails the transcript to the escalation contact and records an email_sent notification', async () => {
    const setup = await chatSetup(t.app, t.container, {
      escalation: { contact_email: 'team@example.test', message: 'A colleague will write to you shortly.' },
    });
    const res = await chat(t.app, setup, { query: 'Please let me speak to a human about order 981', user: 'cust-981' });
    expect(res.json()).toMatchObject({
      agent_response_text: 'A colleague will write to you shortly.',
      was_resolved: false,
    });
    await runEscalationJob(setup.tenant.companyId);
    const mail = await eventually(() =>
      t.container.db
        .selectFrom('email_outbox')
        .selectAll()
        .where('company_id', '=', setup.tenant.companyId)
        .executeTakeFirst(),
    );
    expect(mail).toMatchObject({ recipient: 'team@example.test', kind: 'escalation' });
    expect(mail.subject).toContain('[Helper] A customer asked for a person');
    expect(mail.body_text).toContain('Customer: Please let me speak to a human about order 981');
    expect(mail.body_text).toContain('Helper: A colleague will write to you shortly.');
    const sent = await eventually(async () => {
      const list = await t.app.inject({
        method: 'GET',
        url: '/team-notifications?notification_type=email_sent',
        headers: setup.tenant.headers,
      });
      return list.json().data[0] as { title: string; metadata: Record<string, string> } | undefined;
    });
    expect(sent.title).toBe('Helper e-mailed team@example.test');
    expect(sent.metadata).toMatchObject({
      agent_id: setup.agentId,
      recipient_email: 'team@example.test',
      action_type: 'escalation_email',
    });
  });

  it('sends nothing when the agent has no contact address', async () => {
    const setup = await chatSetup(t.app, t.container);
    await chat(t.app, setup, { query: 'I want to talk to a human' });
    const jobs = await t.container.queue.boss
      .getDb()
      .executeSql(
        `select count(*)::int as n from ${t.container.config.jobsSchema}.job where name = 'chat.escalation-email' and data->>'companyId' = $1`,
        [setup.tenant.companyId],
      );
    expect((jobs.rows[0] as { n: number }).n).toBe(0);
  });
});
