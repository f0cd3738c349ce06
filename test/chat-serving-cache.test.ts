/**
 * Chat turns read the agent and its live deployment from a short in-process cache. A change made
 * through the API is seen at once by the instance that made it, and by every other instance as
 * soon as the database's change notification lands (migration 0041).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './helpers/app.js';
import { chat, chatSetup } from './helpers/chat.js';
import { control } from './helpers/deployments.js';
import { fakeProviders, startFakeOpenAi, type FakeOpenAi } from './helpers/fake-openai.js';

let here: TestApp;
let there: TestApp;
let fake: FakeOpenAi;
beforeAll(async () => {
  fake = await startFakeOpenAi(() => ({ tokens: ['Aye.'] }));
  here = await createTestApp({ LLM_PROVIDERS: fakeProviders(fake), CACHE_TTL_MS: '600000' });
  there = await createTestApp({ LLM_PROVIDERS: fakeProviders(fake), CACHE_TTL_MS: '600000' });
});
afterAll(async () => {
  await here?.close();
  await there?.close();
  await fake?.close();
});

const agent = { model: 'fake:gpt-test', instructions: 'Answer like a pirate.' };

/** Polls until `check` holds (the other instance hears of the change), at most two seconds. */
async function eventually(check: () => Promise<boolean>) {
  const deadline = Date.now() + 2000;
  while (!(await check())) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return true;
}

async function systemPromptOf(app: TestApp, setup: Awaited<ReturnType<typeof chatSetup>>) {
  const res = await chat(app.app, setup, { query: 'Who are you?' });
  expect(res.statusCode).toBe(200);
  return fake.requests.at(-1)!.messages[0]!.content;
}

describe('serving cache of chat turns', () => {
  it("uses an agent's new instructions at once here and as soon as the notification lands there", async () => {
    const setup = await chatSetup(here.app, here.container, agent);
    for (const app of [here, there, there]) expect(await systemPromptOf(app, setup)).toContain('pirate');
    const patched = await here.app.inject({
      method: 'PATCH',
      url: `/api/public/agents/${setup.agentId}`,
      headers: setup.tenant.headers,
      payload: { instructions: 'Answer like a robot.' },
    });
    expect(patched.statusCode).toBe(200);
    expect(await systemPromptOf(here, setup)).toContain('robot');
    expect(await eventually(async () => (await systemPromptOf(there, setup)).includes('robot'))).toBe(true);
  });

  it('refuses turns of a paused deployment (409) and of a deleted agent (404) on both instances', async () => {
    const setup = await chatSetup(here.app, here.container, agent);
    for (const app of [here, there]) expect((await chat(app.app, setup, { query: 'hi' })).statusCode).toBe(200);
    expect((await control(here.app, setup.tenant, setup.deploymentId, 'pause')).statusCode).toBe(200);
    expect((await chat(here.app, setup, { query: 'hi' })).statusCode).toBe(409);
    expect(await eventually(async () => (await chat(there.app, setup, { query: 'hi' })).statusCode === 409)).toBe(true);

    expect((await control(here.app, setup.tenant, setup.deploymentId, 'resume')).statusCode).toBe(200);
    expect((await chat(here.app, setup, { query: 'hi' })).statusCode).toBe(200);
    expect(await eventually(async () => (await chat(there.app, setup, { query: 'hi' })).statusCode === 200)).toBe(true);

    const deleted = await here.app.inject({
      method: 'DELETE',
      url: `/api/public/agents/${setup.agentId}`,
      headers: setup.tenant.headers,
    });
    expect(deleted.statusCode).toBe(204);
    expect((await chat(here.app, setup, { query: 'hi' })).statusCode).toBe(404);
    expect(await eventually(async () => (await chat(there.app, setup, { query: 'hi' })).statusCode === 404)).toBe(true);
  });

  it('sees a deployment changed behind the service (a direct SQL update) through the notification', async () => {
    const setup = await chatSetup(here.app, here.container, agent);
    expect((await chat(here.app, setup, { query: 'hi' })).statusCode).toBe(200);
    await here.container.db
      .updateTable('deployments')
      .set({ status: 'paused' })
      .where('id', '=', setup.deploymentId)
      .execute();
    expect(await eventually(async () => (await chat(here.app, setup, { query: 'hi' })).statusCode === 409)).toBe(true);
  });
});
