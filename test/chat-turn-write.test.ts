/**
 * A turn's records written in one statement (chat.repo `writeTurn` with the support-queries
 * module's part): messages in order with the conversation's counters, the support query opened
 * on the first turn and moved by the next ones, concurrent turns of one conversation serialised,
 * and a closed support query or conversation refusing the turn with nothing written — also when
 * the closing commits while the turn is answering.
 */
import { sql, type Transaction } from 'kysely';
import type { Database } from '../src/db/schema.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './helpers/app.js';
import { chat, chatSetup } from './helpers/chat.js';
import { fakeProviders, startFakeOpenAi, type FakeOpenAi } from './helpers/fake-openai.js';
import { waitForWaiters } from './helpers/locks.js';

let t: TestApp;
let fake: FakeOpenAi;
beforeAll(async () => {
  fake = await startFakeOpenAi();
  t = await createTestApp({ LLM_PROVIDERS: fakeProviders(fake) });
});
afterAll(async () => {
  await t?.close();
  await fake?.close();
});

const messagesOf = async (conversationId: string) =>
  t.container.db
    .selectFrom('conversation_messages')
    .select(['id', 'role', 'content', 'finish_reason'])
    .where('conversation_id', '=', conversationId)
    .orderBy('seq')
    .execute();

const conversationOf = async (conversationId: string) =>
  t.container.db
    .selectFrom('conversations')
    .select(['message_count', 'support_query_id', 'end_user_id', 'last_message_at'])
    .where('id', '=', conversationId)
    .executeTakeFirstOrThrow();

describe('the turn write', () => {
  it('opens the support query on the first turn and moves it on the next, counters and messages in order', async () => {
    const setup = await chatSetup(t.app, t.container);
    const first = await chat(t.app, setup, { query: 'Where is my parcel?', user: 'cust-42' });
    expect(first.statusCode).toBe(200);
    const conversationId = first.json().conversation_id as string;
    const afterFirst = await conversationOf(conversationId);
    expect(afterFirst.message_count).toBe(2);
    expect(afterFirst.support_query_id).not.toBeNull();
    expect(afterFirst.last_message_at).not.toBeNull();
    const endUser = await t.container.db
      .selectFrom('end_users')
      .select(['id', 'external_id'])
      .where('id', '=', afterFirst.end_user_id!)
      .executeTakeFirstOrThrow();
    expect(endUser.external_id).toBe('cust-42');
    const query = await t.container.db
      .selectFrom('support_queries')
      .selectAll()
      .where('id', '=', afterFirst.support_query_id!)
      .executeTakeFirstOrThrow();
    expect(query).toMatchObject({
      conversation_id: conversationId,
      agent_id: setup.agentId,
      deployment_id: setup.deploymentId,
      user_id: endUser.id,
      subject: 'Where is my parcel?',
      agent_actions_count: 1,
    });
    expect(['in_progress', 'resolved']).toContain(query.status);

    const second = await chat(t.app, setup, { query: 'And my refund?', conversation_id: conversationId });
    expect(second.statusCode).toBe(200);
    const afterSecond = await conversationOf(conversationId);
    expect(afterSecond.message_count).toBe(4);
    expect(afterSecond.support_query_id).toBe(afterFirst.support_query_id);
    const moved = await t.container.db
      .selectFrom('support_queries')
      .select(['agent_actions_count', 'subject'])
      .where('id', '=', afterFirst.support_query_id!)
      .executeTakeFirstOrThrow();
    expect(moved).toEqual({ agent_actions_count: 2, subject: 'Where is my parcel?' });
    const messages = await messagesOf(conversationId);
    expect(messages.map((m) => [m.role, m.content.slice(0, 14)])).toEqual([
      ['user', 'Where is my pa'],
      ['assistant', expect.any(String)],
      ['user', 'And my refund?'],
      ['assistant', expect.any(String)],
    ]);
    const queries = await t.container.db
      .selectFrom('support_queries')
      .select('id')
      .where('conversation_id', '=', conversationId)
      .execute();
    expect(queries).toHaveLength(1);
  });

  it('serialises concurrent turns of one conversation: each question followed by its answer', async () => {
    const setup = await chatSetup(t.app, t.container);
    const first = await chat(t.app, setup, { query: 'Question 0' });
    const conversationId = first.json().conversation_id as string;
    const replies = await Promise.all(
      [1, 2, 3, 4, 5].map((i) => chat(t.app, setup, { query: `Question ${i}`, conversation_id: conversationId })),
    );
    expect(replies.map((r) => r.statusCode)).toEqual([200, 200, 200, 200, 200]);
    const messages = await messagesOf(conversationId);
    expect(messages).toHaveLength(12);
    for (let i = 0; i < 12; i += 2) {
      expect(messages[i]!.role).toBe('user');
      expect(messages[i + 1]!.role).toBe('assistant');
    }
    expect(
      messages
        .filter((m) => m.role === 'user')
        .map((m) => m.content)
        .sort(),
    ).toEqual([0, 1, 2, 3, 4, 5].map((i) => `Question ${i}`));
    expect((await conversationOf(conversationId)).message_count).toBe(12);
    const query = await t.container.db
      .selectFrom('support_queries')
      .select('agent_actions_count')
      .where('conversation_id', '=', conversationId)
      .executeTakeFirstOrThrow();
    expect(query.agent_actions_count).toBe(6);
  });

  it('records every first turn of a conversation created empty, even when they race', async () => {
    const setup = await chatSetup(t.app, t.container);
    const created = await t.app.inject({
      method: 'POST',
      url: '/api/v1/chat/conversations',
      headers: setup.token,
      payload: { agent_id: setup.agentId },
    });
    const conversationId = created.json().id as string;
    // Hold the conversation's row until both turns' writes wait for it: the second then runs on a
    // snapshot taken before the first opened the query.
    let replies: Awaited<ReturnType<typeof chat>>[] = [];
    let turns: Promise<Awaited<ReturnType<typeof chat>>[]> = Promise.resolve([]);
    await t.container.db.transaction().execute(async (trx) => {
      await sql`select id from conversations where id = ${conversationId} for update`.execute(trx);
      turns = Promise.all(
        [1, 2].map((i) => chat(t.app, setup, { query: `First ${i}`, conversation_id: conversationId })),
      );
      // Both wait for this transaction (one directly, the other may queue behind the first).
      await waitForWaiters(trx, t.container.db, 2);
    });
    replies = await turns;
    replies.push(
      ...(await Promise.all(
        [3, 4].map((i) => chat(t.app, setup, { query: `First ${i}`, conversation_id: conversationId })),
      )),
    );
    expect(replies.map((r) => r.statusCode)).toEqual([200, 200, 200, 200]);
    const queries = await t.container.db
      .selectFrom('support_queries')
      .select(['id', 'agent_actions_count'])
      .where('conversation_id', '=', conversationId)
      .execute();
    expect(queries).toHaveLength(1);
    expect(queries[0]!.agent_actions_count).toBe(4);
    const conversation = await conversationOf(conversationId);
    expect(conversation).toMatchObject({ message_count: 8, support_query_id: queries[0]!.id });
  });

  it('refuses a turn whose support query is closed (409) and writes nothing', async () => {
    const setup = await chatSetup(t.app, t.container);
    const first = await chat(t.app, setup, { query: 'Hello there' });
    const conversationId = first.json().conversation_id as string;
    const { support_query_id: queryId } = await conversationOf(conversationId);
    await sql`update support_queries set status = 'closed', closed_at = now() where id = ${queryId}`.execute(
      t.container.db,
    );
    const refused = await chat(t.app, setup, { query: 'Anyone?', conversation_id: conversationId });
    expect(refused.statusCode).toBe(409);
    expect(refused.json().detail ?? refused.json().message ?? refused.body).toMatch(/closed/i);
    expect(await messagesOf(conversationId)).toHaveLength(2);
    expect((await conversationOf(conversationId)).message_count).toBe(2);
  });

  it('counts the turn in the support figures at once (rollup contributions pending until folded)', async () => {
    const setup = await chatSetup(t.app, t.container);
    // No fold runs meanwhile (other files' services fold the shared database): the figures come
    // from the pending contributions.
    await t.container.db.transaction().execute(async (trx) => {
      await sql`select pg_advisory_xact_lock(hashtext('support_rollup_fold'))`.execute(trx);
      for (const query of ['One', 'Two', 'Three']) expect((await chat(t.app, setup, { query })).statusCode).toBe(200);
      const agent = (
        await t.app.inject({ method: 'GET', url: `/api/public/agents/${setup.agentId}`, headers: setup.tenant.headers })
      ).json();
      expect(agent.performance_metrics.total_queries_handled).toBe(3);
      const pending = await sql<{ n: number }>`select count(*)::int as n from support_rollup_pending
        where company_id = ${setup.tenant.companyId}`.execute(t.container.db);
      expect(pending.rows[0]!.n).toBeGreaterThanOrEqual(3);
    });
  });

  it.each([
    ['answered by a model (one statement)', { model: 'fake:gpt-test' }],
    ['left unanswered (a transaction)', {}],
  ] as const)('takes the turn out of the journal with its write, a refused turn too: %s', async (_path, agent) => {
    const setup = await chatSetup(t.app, t.container, agent);
    const journaled = async (conversationId: string) =>
      t.container.db
        .selectFrom('chat_pending_turns')
        .select('id')
        .where('conversation_id', '=', conversationId)
        .execute();
    const first = await chat(t.app, setup, { query: 'Hello there' });
    expect(first.statusCode).toBe(200);
    const conversationId = first.json().conversation_id as string;
    // The reply is sent once the write committed: the row went with it.
    expect(await journaled(conversationId)).toEqual([]);
    const { support_query_id: queryId } = await conversationOf(conversationId);
    await sql`update support_queries set status = 'closed', closed_at = now() where id = ${queryId}`.execute(
      t.container.db,
    );
    const refused = await chat(t.app, setup, { query: 'Anyone?', conversation_id: conversationId });
    expect(refused.statusCode).toBe(409);
    expect(await messagesOf(conversationId)).toHaveLength(2);
    // One statement refused deletes it too; a refused transaction rolls back, and the delete
    // follows behind the reply.
    if ('model' in agent) expect(await journaled(conversationId)).toEqual([]);
    for (let i = 0; i < 300 && (await journaled(conversationId)).length > 0; i++)
      await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await journaled(conversationId)).toEqual([]);
  });

  /**
   * Holds `close` (a transaction closing the conversation or its query) open until the turn's
   * write waits for it, then commits it: the turn read the conversation open, answered, and must
   * now be refused with nothing written.
   */
  async function turnRacing(
    agent: Record<string, unknown>,
    close: (trx: Transaction<Database>, conversationId: string, queryId: string) => Promise<void>,
  ) {
    const setup = await chatSetup(t.app, t.container, agent);
    const first = await chat(t.app, setup, { query: 'Hello there' });
    const conversationId = first.json().conversation_id as string;
    const { support_query_id: queryId } = await conversationOf(conversationId);
    let turn: ReturnType<typeof chat> = Promise.resolve(first);
    await t.container.db.transaction().execute(async (trx) => {
      await close(trx, conversationId, queryId!);
      turn = chat(t.app, setup, { query: 'Anyone there?', conversation_id: conversationId });
      await waitForWaiters(trx, t.container.db);
    });
    const refused = await turn;
    expect(refused.statusCode).toBe(409);
    expect(await messagesOf(conversationId)).toHaveLength(2);
    expect((await conversationOf(conversationId)).message_count).toBe(2);
    const query = await t.container.db
      .selectFrom('support_queries')
      .select(['agent_actions_count'])
      .where('id', '=', queryId!)
      .executeTakeFirstOrThrow();
    expect(query.agent_actions_count).toBe(1);
    return refused.json<{ detail?: string; message?: string }>();
  }

  // A model's answer resolves the turn: its records are one statement in autocommit. builtin:kb
  // finds nothing here: the turn notifies the team, in a transaction.
  const PATHS = [
    ['answered by a model (one statement)', { model: 'fake:gpt-test' }],
    ['left unanswered (a transaction)', {}],
  ] as const;

  it.each(PATHS)('refuses a turn whose support query closed while it was answering: %s', async (_path, agent) => {
    const body = await turnRacing(agent, async (trx, _conversationId, queryId) => {
      await sql`update support_queries set status = 'closed', closed_at = now() where id = ${queryId}`.execute(trx);
    });
    expect(JSON.stringify(body)).toMatch(/Support query is closed/);
  });

  it.each(PATHS)('refuses a turn whose conversation was closed while it was answering: %s', async (_path, agent) => {
    const body = await turnRacing(agent, async (trx, conversationId, queryId) => {
      // As the conversations service closes one: the conversation first, then its query.
      await sql`update conversations set status = 'closed', closed_at = now() where id = ${conversationId}`.execute(
        trx,
      );
      await sql`update support_queries set status = 'closed', closed_at = now() where id = ${queryId}`.execute(trx);
    });
    expect(JSON.stringify(body)).toMatch(/Conversation .* is closed/);
  });
});
