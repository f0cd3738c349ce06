/**
 * The CPU pool under a burst (issue: 16 TTS requests held /healthz for seconds): 32 offline TTS
 * requests at once on one thread with a speech queue of 4. The pool runs one, queues four and
 * refuses the rest with 503 and Retry-After in the family's shape, while /healthz and another
 * company's chat turn are answered during the burst. Asserted on the pool's queue and refusals
 * (and /metrics), never on timings.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './helpers/app.js';
import { chatSetup } from './helpers/chat.js';
import { createTenant, type TestTenant } from './helpers/factories.js';
import { fakeProviders, startFakeOpenAi, type FakeOpenAi } from './helpers/fake-openai.js';

const RACHEL = '21m00Tcm4TlvDq8ikWAM';
const QUEUE = 4;
const BURST = 32;

let t: TestApp;
let fake: FakeOpenAi;
let base: string;
let member: TestTenant;
beforeAll(async () => {
  fake = await startFakeOpenAi(() => ({ tokens: ['Still', ' here', '.'] }));
  t = await createTestApp({
    LLM_PROVIDERS: fakeProviders(fake),
    RATE_LIMIT_ENABLED: 'false',
    STT_PROVIDER: 'none',
    CPU_POOL_THREADS: '1',
    CPU_POOL_SPEECH_QUEUE: String(QUEUE),
  });
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  member = await createTenant(t.container, 'member');
});
afterAll(async () => {
  await t?.close();
  await fake?.close();
});

async function until(check: () => boolean) {
  for (let i = 0; i < 1200 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 25));
  expect(check()).toBe(true);
}

/** A long text: each request holds the thread for many sentences. */
const TEXT = Array.from({ length: 30 }, (_, i) => `This is sentence number ${i + 1} of a long spoken answer.`).join(
  ' ',
);

describe('a burst of text-to-speech requests', () => {
  it('runs one, queues four, refuses the rest with 503 + Retry-After, and /healthz and a chat turn answer meanwhile', async () => {
    const setup = await chatSetup(t.app, t.container, { model: 'fake:gpt-test' });
    const speech = () => t.container.cpu.stats().speech!;
    const refusedBefore = speech().refused;
    let maxQueued = 0;
    const burst = Array.from({ length: BURST }, async () => {
      const response = await fetch(`${base}/api/public/voice-agents/vendor/voices/${RACHEL}/tts`, {
        method: 'POST',
        headers: { ...member.headers, 'content-type': 'application/json' },
        body: JSON.stringify({ text: TEXT, output_format: 'pcm_16000' }),
      });
      maxQueued = Math.max(maxQueued, speech().queued);
      const body = response.status === 200 ? (await response.arrayBuffer()).byteLength : await response.json();
      return { status: response.status, retryAfter: response.headers.get('retry-after'), body };
    });

    // The pool is saturated: one job on the thread, the queue full.
    await until(() => speech().running === 1 && speech().queued === QUEUE);
    const health = await fetch(`${base}/healthz`);
    expect(health.status).toBe(200);
    const turn = await fetch(`${base}/api/v1/chat/agent/chat`, {
      method: 'POST',
      headers: { ...setup.token, 'content-type': 'application/json' },
      body: JSON.stringify({ agent_key: setup.agentKey, query: 'Are you there?' }),
    });
    expect(turn.status).toBe(200);
    expect(((await turn.json()) as { agent_response_text: string }).agent_response_text).toBe('Still here.');
    // Both were answered while the speech work was still running and queued.
    expect(speech().running).toBe(1);
    expect(speech().queued).toBeGreaterThan(0);

    const results = await Promise.all(burst);
    const ok = results.filter((r) => r.status === 200);
    const refused = results.filter((r) => r.status === 503);
    expect(ok.length + refused.length).toBe(BURST);
    expect(ok.length).toBeGreaterThanOrEqual(1 + QUEUE);
    expect(refused.length).toBeGreaterThan(0);
    for (const answer of ok) expect(answer.body).toBeGreaterThan(16000); // audio, not an error body
    for (const answer of refused) {
      expect(Number(answer.retryAfter)).toBeGreaterThanOrEqual(1);
      expect(answer.body).toEqual({ detail: expect.stringMatching(/busy with other speech work; retry after \d+ s/) });
    }
    expect(maxQueued).toBeLessThanOrEqual(QUEUE);
    expect(speech().refused - refusedBefore).toBe(refused.length);
    expect(speech()).toMatchObject({ queued: 0, running: 0 });

    const metrics = await (await fetch(`${base}/metrics`)).text();
    expect(metrics).toContain(`switchboard_cpu_pool_refusals_total{kind="speech",reason="full"} ${speech().refused}`);
    expect(metrics).toContain('switchboard_cpu_pool_jobs{kind="speech",state="queued"} 0');
    expect(metrics).toMatch(/switchboard_cpu_pool_job_seconds_count\{kind="speech",outcome="ok"\} [1-9]/);

    // Speech is in use: the thread, idle again, warms the engine up, every step of it once.
    const { ESPEAK_WARM_UP } = await import('../src/adapters/espeak/espeak-tts.js');
    const warmed = `switchboard_cpu_pool_warm_up_steps_total{kind="speech",outcome="ok"} ${ESPEAK_WARM_UP.inputs.length}`;
    let scraped = '';
    for (let i = 0; i < 1200 && !scraped.includes(warmed); i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      scraped = await (await fetch(`${base}/metrics`)).text();
    }
    expect(scraped).toContain(warmed);
    expect(scraped).not.toMatch(/switchboard_cpu_pool_warm_up_steps_total\{kind="speech",outcome="(error|timeout)"\}/);
  }, 180_000);
});
