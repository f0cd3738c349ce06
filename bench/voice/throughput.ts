/**
 * Offline text to speech, throughput per output format: seconds of audio per CPU second.
 *
 *   npx tsx bench/voice/throughput.ts [--rounds 3] [--formats mp3_44100_128,opus_48000_64,...]
 *
 * One espeak-ng synthesis of an English text (8 sentences) is measured once (CPU per second of
 * audio); then the same PCM is encoded `rounds` times into each format, sentence by sentence as
 * the engine's job does, complete files for MP3 and WAV (their headers) and streams for the
 * rest. Prints, per format, encoding alone and synthesis + encoding in audio seconds per CPU
 * second (process.cpuUsage, user + system), and the ratio to the baseline measured in the same
 * run: raw PCM at the engine's own rate (pcm_22050: no resampling, no encoding). The machine's
 * load average is printed: figures from a loaded machine need a quiet re-run.
 */
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { ESPEAK_FORMATS } from '../../src/adapters/espeak/espeak-tts.js';
import { espeakEngine } from '../../src/adapters/espeak/espeak-wasm.js';
import { createEncoder } from '../../src/adapters/tts/encoders.js';
import { splitSentences } from '../../src/adapters/tts/sentences.js';
import type { OutputFormat } from '../../src/ports/text-to-speech.js';

const { values } = parseArgs({
  options: { rounds: { type: 'string', default: '3' }, formats: { type: 'string', default: ESPEAK_FORMATS.join(',') } },
});
const rounds = Number(values.rounds);
const BASELINE: OutputFormat = 'pcm_22050';
const formats = [BASELINE, ...values.formats.split(',').filter((format) => format !== BASELINE)] as OutputFormat[];
for (const format of formats) {
  if (!ESPEAK_FORMATS.includes(format)) throw new Error(`not a format of the offline engine: ${format}`);
}

const TEXT =
  'Thank you for calling. Your order shipped yesterday from our warehouse. It should arrive within three business days. ' +
  'You can follow it with the tracking link we sent by e-mail. If anything is missing, reply to that message. ' +
  'Our team answers within one hour during the week. Is there anything else I can help you with? Have a good day.';

const cpuSeconds = (since: NodeJS.CpuUsage) => {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1e6;
};

const engine = await espeakEngine();
engine.speak('en-us+f3', 175, 'Warm up.');
const synthesisCpu = process.cpuUsage();
const sentences = splitSentences(TEXT).map((sentence) => engine.speak('en-us+f3', 175, sentence));
const synthesisSeconds = cpuSeconds(synthesisCpu);
const rate = sentences[0]!.sampleRate;
const audioSeconds = sentences.reduce((sum, pcm) => sum + pcm.samples.length, 0) / rate;
const synthesisPerAudio = synthesisSeconds / audioSeconds;

function encodeOnce(format: OutputFormat): number {
  const complete = format.startsWith('mp3_') || format.startsWith('wav_');
  const encoder = createEncoder(format, rate, { complete });
  let bytes = 0;
  for (const pcm of sentences) bytes += encoder.push(pcm.samples).length;
  return bytes + encoder.end().length;
}

console.log(
  `load average ${loadavg()
    .map((load) => load.toFixed(2))
    .join(' ')} (figures from a loaded machine need a quiet re-run)`,
);
console.log(
  `synthesis: ${audioSeconds.toFixed(2)} s of audio in ${synthesisSeconds.toFixed(3)} CPU s (${(1 / synthesisPerAudio).toFixed(1)} audio s per CPU s)`,
);
console.log('format            encode audio s/CPU s   synth+encode audio s/CPU s   vs pcm_22050   bytes');
let baseline = 0;
for (const format of formats) {
  encodeOnce(format); // warm up (tables, WebAssembly)
  const cpu = process.cpuUsage();
  let bytes = 0;
  for (let round = 0; round < rounds; round++) bytes = encodeOnce(format);
  const encodePerAudio = cpuSeconds(cpu) / (rounds * audioSeconds);
  const total = 1 / (synthesisPerAudio + encodePerAudio);
  if (format === BASELINE) baseline = total;
  console.log(
    `${format.padEnd(18)}${(1 / Math.max(encodePerAudio, 1e-9)).toFixed(0).padStart(20)}${total.toFixed(1).padStart(29)}${(total / baseline).toFixed(2).padStart(15)}${String(bytes).padStart(10)}`,
  );
}
