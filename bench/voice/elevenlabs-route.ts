/**
 * What the ElevenLabs-compatible route adds to text to speech: time to the first audio byte of
 * `POST /elevenlabs/v1/text-to-speech/{voice}?output_format=…` (xi-api-key, voice_settings nested)
 * against the voice family's own `POST /api/public/voice-agents/vendor/voices/{voice}/tts`, same
 * text and format, one request at a time, the order rotated per sample so both see the machine in
 * the same state. Target: < 1 ms p50 added (median of the paired differences).
 *
 *   npx tsx bench/voice/elevenlabs-route.ts [--samples 200] [--format pcm_16000]
 */
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { benchDatabase, benchPort, percentile, startService } from '../lib/harness.js';

const { values } = parseArgs({
  options: { samples: { type: 'string', default: '200' }, format: { type: 'string', default: 'pcm_16000' } },
});
const samples = Number(values.samples);
const format = values.format;
const apiKey = 'sk_bench_elevenlabs_key_00000001';
const voice = '21m00Tcm4TlvDq8ikWAM';
const texts = [
  'One moment please.',
  'Your order has shipped.',
  'Thanks for calling us today.',
  'Is there anything else?',
];

/** Milliseconds to the first body byte; the body is read to the end. */
async function firstByte(url: string, init: RequestInit): Promise<number> {
  const sent = performance.now();
  const response = await fetch(url, init);
  if (response.status !== 200 || !response.body)
    throw new Error(`${url}: HTTP ${response.status} ${await response.text()}`);
  let first = 0;
  for await (const _chunk of response.body) first ||= performance.now() - sent;
  return first;
}

const database = await benchDatabase('switchboard_bench_elevenlabs');
const service = await startService(benchPort(), {
  DATABASE_URL: database.url,
  BOOTSTRAP_API_KEY: apiKey,
  RATE_LIMIT_ENABLED: 'false',
  RUN_WORKERS: 'false',
  STT_PROVIDER: 'none',
});
try {
  const native = (text: string) =>
    firstByte(`${service.base}/api/public/voice-agents/vendor/voices/${voice}/tts`, {
      method: 'POST',
      headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ text, output_format: format, voice_speed: 100 }),
    });
  const elevenLabs = (text: string) =>
    firstByte(`${service.base}/elevenlabs/v1/text-to-speech/${voice}?output_format=${format}`, {
      method: 'POST',
      headers: { 'xi-api-key': apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ text, model_id: 'eleven_multilingual_v2', voice_settings: { speed: 1, stability: 0.5 } }),
    });
  for (const text of texts) {
    await native(text);
    await elevenLabs(text);
  }
  const a: number[] = [];
  const b: number[] = [];
  for (let i = 0; i < samples; i++) {
    const text = texts[i % texts.length]!;
    if (i % 2) {
      a.push(await native(text));
      b.push(await elevenLabs(text));
    } else {
      b.push(await elevenLabs(text));
      a.push(await native(text));
    }
  }
  const sorted = (xs: number[]) => [...xs].sort((x, y) => x - y);
  const paired = sorted(b.map((ms, i) => ms - a[i]!));
  console.log(`samples ${samples}, ${format}, one request at a time (offline espeak-ng engine)`);
  console.log(
    `native route first byte p50 ${percentile(sorted(a), 50).toFixed(3)} ms, p95 ${percentile(sorted(a), 95).toFixed(3)} ms`,
  );
  console.log(
    `/elevenlabs route first byte p50 ${percentile(sorted(b), 50).toFixed(3)} ms, p95 ${percentile(sorted(b), 95).toFixed(3)} ms`,
  );
  console.log(`added p50 (median of paired differences) ${percentile(paired, 50).toFixed(3)} ms  (target < 1 ms)`);
} finally {
  await service.stop();
  await database.drop();
}
