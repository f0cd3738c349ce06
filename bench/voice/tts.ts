/**
 * Offline text to speech: synthesis speed and concurrent requests held.
 *
 *   npx tsx bench/voice/tts.ts [--rounds 5] [--concurrency 8,32,64]
 *
 * 1. In process, the espeak-ng engine with our encoders: an English text (8 sentences) and an
 *    Arabic one (4 sentences) spoken `rounds` times each as MP3 (mp3_44100_128), PCM
 *    (pcm_16000, windowed-sinc resampled) and, as the baseline, PCM at the engine's own rate
 *    (pcm_22050: no resampling, no encoding). Prints seconds of audio per second of CPU
 *    (process.cpuUsage, user + system) and the encoders' share of the CPU.
 * 2. The service in its own process (offline engine, a fresh database): `POST …/tts` of a
 *    3-sentence text as MP3 by N clients at once, for each N of `concurrency`; prints how many
 *    answered 200 with audio, time to the first byte (p50/p95) and to the last, and audio s/s.
 *    Synthesis runs in the CPU pool's threads, one request at a time per thread; requests past
 *    the speech queue (CPU_POOL_SPEECH_QUEUE) are refused with 503 and Retry-After.
 */
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { createEspeakTts, SPEECH_KIND } from '../../src/adapters/espeak/espeak-tts.js';
import { createCpuPool } from '../../src/lib/cpu-pool.js';
import type { OutputFormat } from '../../src/ports/text-to-speech.js';
import { parseMp3 } from '../../test/helpers/audio.js';
import { benchDatabase, benchPort, startService } from '../lib/harness.js';

const { values } = parseArgs({
  options: { rounds: { type: 'string', default: '5' }, concurrency: { type: 'string', default: '8,32,64' } },
});
const rounds = Number(values.rounds);
const levels = values.concurrency.split(',').map(Number);

const ENGLISH =
  'Thank you for calling. Your order shipped yesterday from our warehouse. It should arrive within three business days. ' +
  'You can follow it with the tracking link we sent by e-mail. If anything is missing, reply to that message. ' +
  'Our team answers within one hour during the week. Is there anything else I can help you with? Have a good day.';
const ARABIC =
  'شكرا لاتصالك بنا. تم شحن طلبك أمس من المستودع. سيصل خلال ثلاثة أيام عمل. هل هناك شيء آخر يمكنني مساعدتك به؟';

function audioSeconds(format: OutputFormat, bytes: Buffer): number {
  if (format.startsWith('mp3')) return parseMp3(bytes).durationS;
  return bytes.length / 2 / Number(format.split('_')[1]);
}

/** One thread of the CPU pool, as the service's speech jobs use it (process.cpuUsage counts every thread). */
const pool = createCpuPool({ threads: 1, kinds: { [SPEECH_KIND]: { queue: 1 } } });

async function speed(format: OutputFormat) {
  const tts = createEspeakTts(pool);
  let audio = 0;
  const cpu = process.cpuUsage();
  const start = performance.now();
  for (let round = 0; round < rounds; round++) {
    for (const [text, voice] of [
      [ENGLISH, 'en-us+f3'],
      [ARABIC, 'ar+m1'],
    ] as const) {
      const chunks: Buffer[] = [];
      const request = { text, voice: { voiceId: 'bench', offlineVoice: voice }, format };
      for await (const chunk of tts.synthesize(request, new AbortController().signal)) chunks.push(chunk);
      audio += audioSeconds(format, Buffer.concat(chunks));
    }
  }
  const used = process.cpuUsage(cpu);
  const cpuS = (used.user + used.system) / 1e6;
  return { format, audio, cpuS, wallS: (performance.now() - start) / 1000, ratio: audio / cpuS };
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function concurrent(base: string, apiKey: string, clients: number) {
  const url = `${base}/api/public/voice-agents/vendor/voices/21m00Tcm4TlvDq8ikWAM/tts`;
  const body = JSON.stringify({
    text: 'Your order shipped yesterday. It arrives within three days. Anything else?',
    output_format: 'mp3_44100_128',
  });
  const start = performance.now();
  const results = await Promise.all(
    Array.from({ length: clients }, async () => {
      const sent = performance.now();
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
        body,
      });
      const chunks: Buffer[] = [];
      let first = 0;
      for await (const chunk of response.body!) {
        first ||= performance.now() - sent;
        chunks.push(Buffer.from(chunk));
      }
      const bytes = Buffer.concat(chunks);
      return {
        ok: response.status === 200 && bytes.length > 0,
        first,
        last: performance.now() - sent,
        audio: response.status === 200 ? parseMp3(bytes).durationS : 0,
      };
    }),
  );
  const wall = (performance.now() - start) / 1000;
  const firsts = results.map((r) => r.first).sort((a, b) => a - b);
  const lasts = results.map((r) => r.last).sort((a, b) => a - b);
  const audio = results.reduce((sum, r) => sum + r.audio, 0);
  return {
    clients,
    ok: results.filter((r) => r.ok).length,
    firstP50: percentile(firsts, 50),
    firstP95: percentile(firsts, 95),
    lastP95: percentile(lasts, 95),
    audioPerS: audio / wall,
  };
}

console.log(`# offline synthesis speed (${rounds} rounds of an English and an Arabic text)`);
const baseline = await speed('pcm_22050');
for (const result of [baseline, await speed('pcm_16000'), await speed('mp3_44100_128')]) {
  console.log(
    `${result.format.padEnd(14)} audio ${result.audio.toFixed(1)} s  cpu ${result.cpuS.toFixed(2)} s  wall ${result.wallS.toFixed(2)} s  ` +
      `→ ${result.ratio.toFixed(1)} s of audio per CPU second (${((result.ratio / baseline.ratio) * 100).toFixed(0)} % of the engine alone)`,
  );
}
await pool.close();

const database = await benchDatabase('switchboard_bench_tts');
const apiKey = 'sk_bench_tts_key_000000000001';
const service = await startService(benchPort(), {
  DATABASE_URL: database.url,
  BOOTSTRAP_API_KEY: apiKey,
  RATE_LIMIT_ENABLED: 'false',
  RUN_WORKERS: 'false',
  STT_PROVIDER: 'none',
});
try {
  console.log('\n# concurrent TTS requests (service in its own process, mp3_44100_128, 3 sentences each)');
  await concurrent(service.base, apiKey, 2); // warm-up: loads the engine
  for (const clients of levels) {
    const r = await concurrent(service.base, apiKey, clients);
    console.log(
      `${String(r.clients).padStart(3)} clients: ${r.ok}/${r.clients} answered with audio; first byte p50 ${r.firstP50.toFixed(0)} ms, ` +
        `p95 ${r.firstP95.toFixed(0)} ms; last byte p95 ${r.lastP95.toFixed(0)} ms; ${r.audioPerS.toFixed(1)} s of audio per second`,
    );
  }
} finally {
  await service.stop();
  await database.drop();
}
