/**
 * A voice turn's first audio, measured on the server: each `audio_chunk` of
 * `POST /voice-agents/{id}/respond` (SSE) carries `text_to_audio_ms`, the milliseconds from the
 * moment its sentence's text was complete on the server to the moment the event was written; the
 * bench reads it from `audio_chunk` 0 of every turn.
 *
 *   npx tsx bench/voice/respond.ts [--samples 24] [--concurrency 8]
 *
 * The service runs in its own process (offline espeak-ng engine, no key, fresh database, workers
 * on for ingestion, the synthesis cache off so that every turn synthesises) with a `builtin:kb`
 * main agent on a one-article knowledge base, and two voice agents: MP3 (`mp3_44100_128`) and PCM
 * (`pcm_16000`). Per format, two arms in the same run: the baseline, one turn at a time, then
 * `concurrency` turns at once (in rounds); prints p50/p95 of each and the ratio of the loaded arm
 * to the baseline (targets with 8 concurrent turns: MP3 < 150 ms, PCM < 40 ms). The client's view
 * (first audio after the text event that completed the sentence arrived) is printed beside it.
 */
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { sentenceSplitter } from '../../src/modules/voice-agents/voice-agents.respond.js';
import { apiClient, benchDatabase, benchPort, startService } from '../lib/harness.js';

const { values } = parseArgs({
  options: { samples: { type: 'string', default: '24' }, concurrency: { type: 'string', default: '8' } },
});
const samples = Number(values.samples);
const concurrency = Number(values.concurrency);
const apiKey = 'sk_bench_voice_respond_00000001';
let base = '';

/** The API under /api/public, once the service is up. */
let api: ReturnType<typeof apiClient>;

async function setUp(): Promise<Record<string, string>> {
  const upload = await api('POST', '/documents/upload/article', {
    document_title: 'Returns and refunds',
    content:
      'Q: How long do refunds take?\nA: Refunds are paid to the original card within 5 business days after we receive the item. ' +
      'You get an e-mail when the refund leaves our bank. Sale items can be returned within 14 days in their original packaging.',
  });
  for (let i = 0; ; i++) {
    const task = await api('GET', `/documents/task/${String(upload.task_id)}`);
    if (task.status === 'completed') break;
    if (task.status === 'failed' || i > 600) throw new Error('ingestion failed');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const agent = await api('POST', '/agents', { title: 'Bench voice agent', model: 'builtin:kb' });
  const ids: Record<string, string> = {};
  for (const format of ['mp3_44100_128', 'pcm_16000']) {
    const voice = await api('POST', '/voice-agents', {
      name: `Front desk ${format}`,
      voice_id: '21m00Tcm4TlvDq8ikWAM',
      main_agent_id: agent.id,
      active: true,
      output_format: format,
    });
    ids[format] = String(voice.id);
  }
  return ids;
}

interface Sample {
  /** Server: the sentence's text complete → its audio event written. */
  server: number;
  /** Client: the text event completing the first sentence arrived → audio 0 arrived. */
  client: number;
}

/** One turn: the first audio's latency as the server measured it, and as the client saw it. */
async function sample(voiceAgentId: string): Promise<Sample> {
  const form = new FormData();
  form.set('text', 'How long do refunds take?');
  const res = await fetch(`${base}/api/public/voice-agents/${voiceAgentId}/respond`, {
    method: 'POST',
    headers: { 'x-api-key': apiKey, accept: 'text/event-stream' },
    body: form,
  });
  if (res.status !== 200) throw new Error(`respond: ${res.status} ${await res.text()}`);
  const splitter = sentenceSplitter();
  const decoder = new TextDecoder();
  let buffer = '';
  let sentenceAt = 0;
  let audioAt = 0;
  let server = NaN;
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    const now = performance.now();
    buffer += decoder.decode(chunk, { stream: true });
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const frame = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const type = /^event: (.*)$/m.exec(frame)?.[1];
      const data = JSON.parse(/^data: (.*)$/m.exec(frame)?.[1] ?? '{}') as {
        content?: string;
        index?: number;
        text_to_audio_ms?: number;
      };
      if (type === 'agent_text_chunk' && !sentenceAt && splitter.push(data.content ?? '').length) sentenceAt = now;
      if (type === 'end' && !sentenceAt) sentenceAt = now;
      if (type === 'audio_chunk' && data.index === 0) {
        audioAt = now;
        server = Number(data.text_to_audio_ms);
      }
      if (type === 'error') throw new Error(`stream error: ${frame}`);
    }
  }
  if (Number.isNaN(server)) throw new Error('no audio_chunk 0 with text_to_audio_ms');
  // A one-sentence answer completes its sentence only at `end` on the client: counted as 0 there.
  return { server, client: Math.max(0, audioAt - sentenceAt) };
}

/** `n` turns, `at` at a time (in rounds). */
async function arm(voiceAgentId: string, n: number, at: number): Promise<Sample[]> {
  const out: Sample[] = [];
  while (out.length < n) {
    const round = Math.min(at, n - out.length);
    out.push(...(await Promise.all(Array.from({ length: round }, () => sample(voiceAgentId)))));
  }
  return out;
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

const database = await benchDatabase('switchboard_bench_voice');
const service = await startService(benchPort(), {
  DATABASE_URL: database.url,
  BOOTSTRAP_API_KEY: apiKey,
  RATE_LIMIT_ENABLED: 'false',
  RUN_WORKERS: 'true',
  EMBEDDINGS_PROVIDER: 'none',
  STT_PROVIDER: 'none',
  // Every turn synthesises (identical answers would otherwise be served from the cache).
  SPEECH_CACHE_BYTES: '0',
  CPU_POOL_SPEECH_QUEUE: String(Math.max(16, concurrency * 4)),
});
const stats = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return { p50: percentile(sorted, 50), p95: percentile(sorted, 95) };
};
const ms = (value: number) => `${value.toFixed(1).padStart(6)} ms`;
try {
  base = service.base;
  api = apiClient(`${base}/api/public`, apiKey);
  const ids = await setUp();
  const formats = Object.keys(ids);
  // Warm-up: loads the engine, then turns at once so that every pool thread has started and
  // loaded it (threads start on first use: a cold one would land in the measured arm).
  for (const format of formats) {
    await arm(ids[format]!, 2, 1);
    await arm(ids[format]!, concurrency, concurrency);
  }
  console.log(
    `# first audio of a spoken turn, server-side (text complete → audio_chunk 0 written), ${samples} turns per arm`,
  );
  for (const format of formats) {
    const baseline = await arm(ids[format]!, samples, 1);
    const loaded = await arm(ids[format]!, samples, concurrency);
    const b = stats(baseline.map((s) => s.server));
    const l = stats(loaded.map((s) => s.server));
    const c = stats(loaded.map((s) => s.client));
    console.log(
      `${format.padEnd(14)} 1 at a time: p50 ${ms(b.p50)} p95 ${ms(b.p95)} | ${concurrency} at once: p50 ${ms(l.p50)} p95 ${ms(l.p95)} ` +
        `(x${(l.p50 / b.p50).toFixed(2)} / x${(l.p95 / b.p95).toFixed(2)}) | client view at ${concurrency}: p50 ${ms(c.p50)} p95 ${ms(c.p95)}`,
    );
  }
} finally {
  await service.stop();
  await database.drop();
}
