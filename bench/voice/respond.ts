/**
 * A voice turn's first audio: time to the first `audio_chunk` of `POST /voice-agents/{id}/respond`
 * (SSE) over the time the first complete sentence of the answer's text arrived in the same turn.
 *
 *   npx tsx bench/voice/respond.ts [--samples 40]
 *
 * The service runs in its own process (offline espeak-ng engine, no key, fresh database, workers
 * on for ingestion) with a `builtin:kb` main agent on a one-article knowledge base. Samples
 * alternate between a voice agent speaking MP3 (`mp3_44100_128`) and one speaking PCM
 * (`pcm_16000`), one turn at a time; for each, the gap is measured on the client: the moment the
 * `audio_chunk` with index 0 arrived minus the moment the `agent_text_chunk` that completed the
 * first sentence (terminal punctuation and a space, or the end of the text) arrived. Prints p50
 * and p95 per format (target: within 150 ms).
 */
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { sentenceSplitter } from '../../src/modules/voice-agents/voice-agents.respond.js';
import { apiClient, benchDatabase, benchPort, startService } from '../lib/harness.js';

const { values } = parseArgs({ options: { samples: { type: 'string', default: '40' } } });
const samples = Number(values.samples);
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

/** One turn: milliseconds from the first complete sentence of text to the first audio chunk. */
async function sample(voiceAgentId: string): Promise<number> {
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
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    const now = performance.now();
    buffer += decoder.decode(chunk, { stream: true });
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const frame = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const type = /^event: (.*)$/m.exec(frame)?.[1];
      const data = JSON.parse(/^data: (.*)$/m.exec(frame)?.[1] ?? '{}') as { content?: string; index?: number };
      if (type === 'agent_text_chunk' && !sentenceAt && splitter.push(data.content ?? '').length) sentenceAt = now;
      if (type === 'end' && !sentenceAt) sentenceAt = now;
      if (type === 'audio_chunk' && data.index === 0) audioAt = now;
      if (type === 'error') throw new Error(`stream error: ${frame}`);
    }
  }
  // A one-sentence answer completes its sentence only when the text ends (at `end`); its audio
  // then comes before it and the gap is counted as 0.
  return Math.max(0, audioAt - sentenceAt);
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
});
try {
  base = service.base;
  api = apiClient(`${base}/api/public`, apiKey);
  const ids = await setUp();
  const formats = Object.keys(ids);
  for (const format of formats) await sample(ids[format]!); // warm-up: loads the engine
  const gaps: Record<string, number[]> = Object.fromEntries(formats.map((format) => [format, []]));
  for (let i = 0; i < samples; i++) {
    const format = formats[i % formats.length]!;
    gaps[format]!.push(await sample(ids[format]!));
  }
  console.log(`# first audio_chunk after the first complete sentence of text (${samples} alternating turns)`);
  for (const format of formats) {
    const sorted = gaps[format]!.sort((a, b) => a - b);
    console.log(
      `${format.padEnd(14)} n=${sorted.length}  p50 ${percentile(sorted, 50).toFixed(1)} ms  p95 ${percentile(sorted, 95).toFixed(1)} ms  max ${sorted.at(-1)!.toFixed(1)} ms`,
    );
  }
} finally {
  await service.stop();
  await database.drop();
}
