/**
 * MP3 encoders compared on the same PCM: LAME in WebAssembly (the service's, src/adapters/tts/
 * mp3-lame.ts) against lamejs (the pure-JS port it replaced, kept as the baseline).
 *
 *   npx tsx bench/voice/mp3-encoders.ts [--rounds 5]
 *
 * One espeak-ng synthesis of an English text (8 sentences), resampled once per output rate; then,
 * for every MP3 format, the same samples are encoded `rounds` times by each encoder, sentence by
 * sentence into one file, in alternation (lamejs, WASM, lamejs, ...) so both see the same machine.
 * Prints encode throughput in seconds of audio per CPU second (process.cpuUsage, user + system)
 * for each, their ratio, and the first sentence alone as one file (a spoken turn's first chunk)
 * in milliseconds of CPU. The load average is printed: figures from a loaded machine need a
 * quiet re-run, the ratios hold better.
 */
import { Mp3Encoder } from '@breezystack/lamejs';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { espeakEngine } from '../../src/adapters/espeak/espeak-wasm.js';
import { parseFormat } from '../../src/adapters/tts/encoders.js';
import { createLameMp3 } from '../../src/adapters/tts/mp3-lame.js';
import { resamplePcm16 } from '../../src/adapters/tts/resample.js';
import { splitSentences } from '../../src/adapters/tts/sentences.js';
import { OUTPUT_FORMATS } from '../../src/ports/text-to-speech.js';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '5' } } });
const rounds = Number(values.rounds);

const TEXT =
  'Thank you for calling. Your order shipped yesterday from our warehouse. It should arrive within three business days. ' +
  'You can follow it with the tracking link we sent by e-mail. If anything is missing, reply to that message. ' +
  'Our team answers within one hour during the week. Is there anything else I can help you with? Have a good day.';

const engine = await espeakEngine();
const spoken = splitSentences(TEXT).map((sentence) => engine.speak('en-us+f3', 175, sentence));
const inputRate = spoken[0]!.sampleRate;

type Encode = (sentences: Int16Array[], sampleRate: number, kbps: number) => number;

const encoders: Record<'lamejs' | 'wasm', Encode> = {
  lamejs(sentences, sampleRate, kbps) {
    const mp3 = new Mp3Encoder(1, sampleRate, kbps);
    let bytes = 0;
    for (const pcm of sentences) bytes += mp3.encodeBuffer(pcm).length;
    return bytes + mp3.flush().length;
  },
  wasm(sentences, sampleRate, kbps) {
    const mp3 = createLameMp3(sampleRate, kbps);
    let bytes = 0;
    for (const pcm of sentences) bytes += mp3.push(pcm).length;
    return bytes + mp3.end().length;
  },
};

const cpuSeconds = (since: NodeJS.CpuUsage) => {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1e6;
};

console.log(
  `load average ${loadavg()
    .map((load) => load.toFixed(2))
    .join(' ')} (figures from a loaded machine need a quiet re-run)`,
);
console.log(
  'format            lamejs audio s/CPU s   WASM audio s/CPU s   WASM / lamejs   first sentence CPU ms (lamejs → WASM)',
);
for (const format of OUTPUT_FORMATS.filter((name) => name.startsWith('mp3_'))) {
  const { sampleRate, kbps } = parseFormat(format);
  const sentences = spoken.map((pcm) => resamplePcm16(pcm.samples, inputRate, sampleRate));
  const audioSeconds = sentences.reduce((sum, pcm) => sum + pcm.length, 0) / sampleRate;
  const cpu = { lamejs: 0, wasm: 0 };
  const first = { lamejs: 0, wasm: 0 };
  for (const name of ['lamejs', 'wasm'] as const) encoders[name](sentences, sampleRate, kbps!); // warm up
  for (let round = 0; round < rounds; round++) {
    for (const name of ['lamejs', 'wasm'] as const) {
      let since = process.cpuUsage();
      encoders[name](sentences, sampleRate, kbps!);
      cpu[name] += cpuSeconds(since);
      since = process.cpuUsage();
      encoders[name]([sentences[0]!], sampleRate, kbps!);
      first[name] += cpuSeconds(since);
    }
  }
  const throughput = (name: 'lamejs' | 'wasm') => (rounds * audioSeconds) / cpu[name];
  const firstMs = (name: 'lamejs' | 'wasm') => ((first[name] / rounds) * 1000).toFixed(1);
  console.log(
    `${format.padEnd(18)}${throughput('lamejs').toFixed(0).padStart(22)}${throughput('wasm').toFixed(0).padStart(21)}` +
      `${(throughput('wasm') / throughput('lamejs')).toFixed(2).padStart(16)}×   ${firstMs('lamejs')} → ${firstMs('wasm')}`,
  );
}
