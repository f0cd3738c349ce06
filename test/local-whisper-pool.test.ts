/**
 * Local Whisper prepares its audio in the CPU pool, not on the event loop: the WAV file is decoded
 * and resampled by a job of the pool's `speech` kind (src/adapters/transformers/wav.job.ts), so a
 * full pool refuses the transcription at once (CpuBusyError: 503 and Retry-After), a file the
 * decoder cannot read fails with the SpeechError the worker raised, and a readable one reaches the
 * model (here none is on disk: the clear `unavailable` error that follows the decoding).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { SPEECH_KIND } from '../src/adapters/espeak/espeak-tts.js';
import { createLocalWhisper } from '../src/adapters/transformers/local-whisper.js';
import { wavHeader } from '../src/adapters/tts/encoders.js';
import { CpuBusyError, cpuJobModule, createCpuPool, type CpuJob, type CpuPool } from '../src/lib/cpu-pool.js';
import { SpeechError } from '../src/ports/speech.js';

const modelsDir = mkdtempSync(path.join(tmpdir(), 'whisper-none-'));
afterAll(() => rmSync(modelsDir, { recursive: true, force: true }));

const GATED: CpuJob<{ gate: SharedArrayBuffer; label: string }, string, string> = {
  kind: SPEECH_KIND,
  module: cpuJobModule(import.meta.url, './helpers/cpu-jobs'),
  name: 'gated',
};

/** Two seconds of 44.1 kHz stereo PCM: the decoder averages and resamples it. */
function stereoWav(): Buffer {
  const frames = 88_200;
  const header = wavHeader(44_100, frames * 4);
  header.writeUInt16LE(2, 22); // channels
  header.writeUInt32LE(44_100 * 4, 28); // byte rate
  header.writeUInt16LE(4, 32); // block align
  return Buffer.concat([header, Buffer.alloc(frames * 4, 1)]);
}

const audio = (buffer: Buffer) => ({ buffer, filename: 'q.wav', mimetype: 'audio/wav' });
const signal = () => new AbortController().signal;

let pool: CpuPool | undefined;
afterEach(async () => {
  await pool?.close(0);
  pool = undefined;
});

describe('local Whisper in the CPU pool', () => {
  it('is refused at once when the speech queue is full', async () => {
    pool = createCpuPool({ threads: 1, kinds: { [SPEECH_KIND]: { queue: 0 } } });
    const gate = new SharedArrayBuffer(4);
    let running: () => void = () => undefined;
    const started = new Promise<void>((resolve) => (running = resolve));
    const held = pool.run(GATED, { gate, label: 'held' }, { onChunk: () => running() });
    await started; // the only thread is taken
    const whisper = createLocalWhisper({ model: 'none/whisper', modelsDir, allowDownload: false }, pool);
    await expect(whisper.transcribe(audio(stereoWav()), signal())).rejects.toBeInstanceOf(CpuBusyError);
    expect(pool.stats()[SPEECH_KIND]).toMatchObject({ running: 1, queued: 0, refused: 1 });
    Atomics.store(new Int32Array(gate), 0, 1);
    Atomics.notify(new Int32Array(gate), 0);
    expect(await held).toBe('held');
  });

  it("fails with the worker's SpeechError for a WAV it cannot read", async () => {
    pool = createCpuPool({ threads: 1, kinds: { [SPEECH_KIND]: { queue: 2 } } });
    const whisper = createLocalWhisper({ model: 'none/whisper', modelsDir, allowDownload: false }, pool);
    const noData = Buffer.from('RIFF\u0004\u0000\u0000\u0000WAVE', 'latin1');
    const error = await whisper.transcribe(audio(noData), signal()).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(SpeechError);
    expect(error).toMatchObject({ failure: 'audio', message: 'The WAV file has no format chunk' });
  });

  it('decodes a readable WAV in the pool, then asks for the model', async () => {
    const finished: string[] = [];
    pool = createCpuPool({
      threads: 1,
      kinds: { [SPEECH_KIND]: { queue: 2 } },
      observer: { refused: () => undefined, finished: (kind, outcome) => finished.push(`${kind} ${outcome}`) },
    });
    const whisper = createLocalWhisper({ model: 'none/whisper', modelsDir, allowDownload: false }, pool);
    const error = await whisper.transcribe(audio(stereoWav()), signal()).catch((caught: unknown) => caught);
    expect(finished).toEqual([`${SPEECH_KIND} ok`]);
    expect(error).toBeInstanceOf(SpeechError);
    expect(error).toMatchObject({ failure: 'unavailable' });
  });
});
