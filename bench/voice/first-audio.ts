/**
 * A spoken turn's first audio in the offline engine, two arms in the same process and the same
 * run (alternated): `whole`, the first sentence synthesised and encoded whole as one complete file
 * (how a turn's first chunk was made before), and `first moment`, only the sentence's start
 * synthesised (espeak stopped after 0.9 s of audio) and its first moment encoded, in an urgent job
 * (how it is made now; the sentence is synthesised again in the next job). The real engine in the
 * real CPU pool (CPU_POOL_THREADS threads, default 1), N turns at once, each asking for its first
 * sentence; the time to the first complete file, p50/p95 per arm and their ratio.
 *
 *   npx tsx bench/voice/first-audio.ts [--rounds 6] [--concurrency 1,8] [--formats mp3_44100_128,pcm_16000]
 */
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { createEspeakTts, SPEECH_KIND } from '../../src/adapters/espeak/espeak-tts.js';
import { createCpuPool } from '../../src/lib/cpu-pool.js';
import type { OutputFormat } from '../../src/ports/text-to-speech.js';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '6' },
    concurrency: { type: 'string', default: '1,8' },
    formats: { type: 'string', default: 'mp3_44100_128,pcm_16000' },
  },
});
const threads = Number(process.env.CPU_POOL_THREADS ?? 1);
const pool = createCpuPool({ threads, kinds: { [SPEECH_KIND]: { queue: 1000 } } });
const tts = createEspeakTts(pool);
// The bench answer's first sentence (4.9 s of audio), then what follows it in the turn.
const FIRST = 'Refunds are paid to the original card within 5 business days after we receive the item.';
const NEXT = 'You get an e-mail when the refund leaves our bank.';

/** One turn: its first sentence asked, then (as a turn does) its next one; ms to the first file. */
async function turn(format: OutputFormat, firstPart: boolean): Promise<number> {
  const started = performance.now();
  let first = NaN;
  const signal = new AbortController().signal;
  const voice = { voiceId: 'bench', offlineVoice: 'en-us+f3' };
  for await (const file of tts.synthesize({ text: FIRST, voice, format, complete: true, firstPart }, signal)) {
    if (Number.isNaN(first) && file.length) first = performance.now() - started;
  }
  for await (const file of tts.synthesize({ text: NEXT, voice, format, complete: true }, signal)) void file;
  return first;
}

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
};
const ms = (value: number) => `${value.toFixed(1).padStart(7)} ms`;

for (const format of values.formats.split(',') as OutputFormat[]) await turn(format, true); // warm-up
console.log(
  `# first audio of a turn in the offline engine, ${threads} pool thread(s), ${values.rounds} rounds per arm`,
);
for (const format of values.formats.split(',') as OutputFormat[]) {
  for (const at of values.concurrency.split(',').map(Number)) {
    const arms = { whole: [] as number[], first: [] as number[] };
    for (let round = 0; round < Number(values.rounds); round++) {
      for (const arm of round % 2 ? (['first', 'whole'] as const) : (['whole', 'first'] as const)) {
        arms[arm].push(...(await Promise.all(Array.from({ length: at }, () => turn(format, arm === 'first')))));
      }
    }
    const [w, f] = [arms.whole, arms.first];
    console.log(
      `${format.padEnd(14)} ${String(at).padStart(2)} at once | whole: p50 ${ms(percentile(w, 50))} p95 ${ms(percentile(w, 95))}` +
        ` | first moment: p50 ${ms(percentile(f, 50))} p95 ${ms(percentile(f, 95))}` +
        ` | ratio p50 ${(percentile(f, 50) / percentile(w, 50)).toFixed(2)} p95 ${(percentile(f, 95) / percentile(w, 95)).toFixed(2)}`,
    );
  }
}
await pool.close();
