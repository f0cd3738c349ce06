/**
 * Local Whisper's audio preparation as a job of the CPU pool (src/lib/cpu-pool.ts): the WAV file
 * decoded, its channels averaged and the signal resampled to 16 kHz (./wav.ts) in a worker
 * thread, never on the event loop. A file it cannot read fails with the SpeechError that says why.
 */
import { decodeWav } from './wav.js';

export interface DecodeWavInput {
  bytes: Uint8Array;
}

export function decodeWavJob(input: DecodeWavInput): Float32Array {
  const bytes = Buffer.from(input.bytes.buffer, input.bytes.byteOffset, input.bytes.byteLength);
  return decodeWav(bytes);
}
