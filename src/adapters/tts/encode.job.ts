/**
 * A CPU-pool job (src/lib/cpu-pool.ts) that encodes 16-bit mono PCM into an output format with the
 * project's encoders (./encoders.ts): a provider's PCM transcoded to the format asked for, off the
 * event loop. Runs in a worker thread.
 */
import type { OutputFormat } from '../../ports/text-to-speech.js';
import { createEncoder } from './encoders.js';

export interface EncodeJobInput {
  format: OutputFormat;
  /** The PCM's rate. */
  sampleRate: number;
  /** 16-bit little-endian samples (a stray last byte is not a sample and is left out). */
  pcm: Uint8Array;
  /** One complete file (WAV sizes, MP3 info frame). */
  complete?: boolean;
}

export function encodePcm(input: EncodeJobInput): Uint8Array {
  const view = new DataView(input.pcm.buffer, input.pcm.byteOffset, input.pcm.byteLength);
  const samples = new Int16Array(input.pcm.byteLength >> 1);
  for (let i = 0; i < samples.length; i++) samples[i] = view.getInt16(i * 2, true);
  const encoder = createEncoder(input.format, input.sampleRate, { complete: input.complete ?? false });
  return new Uint8Array(Buffer.concat([encoder.push(samples), encoder.end()]));
}
