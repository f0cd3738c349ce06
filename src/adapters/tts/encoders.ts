/**
 * Streaming encoders of the text-to-speech output formats (DESIGN §9): 16-bit mono PCM chunks in
 * (at the engine's rate), bytes of the requested format out, chunk by chunk. PCM is resampled with
 * a windowed sinc (./resample.ts); MP3 by LAME in WebAssembly (./mp3-lame.ts) at the format's rate
 * and bitrate, constant bitrate;
 * µ-law and A-law by G.711 at 8 kHz; WAV is a RIFF header then PCM; Opus is libopus in Ogg
 * (./ogg-opus.ts). Raw PCM is little-endian, as ElevenLabs sends it.
 *
 * A streamed WAV does not know its length when the header goes out, so its RIFF and data sizes are
 * 0xFFFFFFFF (readers read to the end). With `complete`, the encoder returns nothing until `end()`,
 * which returns the whole file: a WAV with its real sizes, an MP3 led by its LAME info frame
 * (encoder delay and padding, ./mp3-info.ts) so that files decoded one after another join
 * without gaps. Other formats are the same either way (an Ogg stream ends with its exact length).
 */
import { endianness } from 'node:os';
import type { OutputFormat } from '../../ports/text-to-speech.js';
import { linearToALaw, linearToMuLaw } from './g711.js';
import { mp3InfoFrame } from './mp3-info.js';
import { createLameMp3 } from './mp3-lame.js';
import { createOggOpusEncoder } from './ogg-opus.js';
import { resamplePcm16 } from './resample.js';

export { withWavSizes } from '../../lib/wav-sizes.js';

export interface AudioEncoder {
  /** Encodes one chunk of PCM at the input rate; may return an empty buffer (MP3 buffers frames). */
  push(pcm: Int16Array): Buffer;
  /** What is left (the MP3 encoder's last frames). */
  end(): Buffer;
}

export interface ParsedFormat {
  codec: 'mp3' | 'pcm' | 'ulaw' | 'alaw' | 'wav' | 'opus';
  sampleRate: number;
  /** MP3 and Opus. */
  kbps?: number;
}

export function parseFormat(format: OutputFormat): ParsedFormat {
  const [codec, rate, kbps] = format.split('_') as [ParsedFormat['codec'], string, string | undefined];
  return { codec, sampleRate: Number(rate), ...(kbps ? { kbps: Number(kbps) } : {}) };
}

const LITTLE_ENDIAN = endianness() === 'LE';

export function pcmBytes(pcm: Int16Array): Buffer {
  // Samples are little-endian on the wire: on such a machine, one copy of their bytes.
  if (LITTLE_ENDIAN) return Buffer.from(new Uint8Array(pcm.buffer, pcm.byteOffset, pcm.byteLength));
  const out = Buffer.alloc(pcm.length * 2);
  for (let i = 0; i < pcm.length; i++) out.writeInt16LE(pcm[i]!, i * 2);
  return out;
}

/** A 44-byte RIFF/WAVE header of 16-bit mono PCM; `dataBytes` unknown → 0xFFFFFFFF sizes (a stream). */
export function wavHeader(sampleRate: number, dataBytes?: number): Buffer {
  const header = Buffer.alloc(44);
  const unknown = dataBytes === undefined;
  header.write('RIFF', 0, 'latin1');
  header.writeUInt32LE(unknown ? 0xffffffff : 36 + dataBytes, 4);
  header.write('WAVE', 8, 'latin1');
  header.write('fmt ', 12, 'latin1');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(1, 22); // mono
  header.writeUInt32LE(sampleRate, 24);
  header.writeUInt32LE(sampleRate * 2, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'latin1');
  header.writeUInt32LE(unknown ? 0xffffffff : dataBytes, 40);
  return header;
}

function companded(pcm: Int16Array, compand: (sample: number) => number): Buffer {
  const out = Buffer.alloc(pcm.length);
  for (let i = 0; i < pcm.length; i++) out[i] = compand(pcm[i]!);
  return out;
}

export interface EncoderOptions {
  /** One complete file at `end()` (WAV sizes, MP3 info frame) instead of a stream. */
  complete?: boolean;
}

function mp3Encoder(sampleRate: number, kbps: number, complete: boolean, resampled: (pcm: Int16Array) => Int16Array) {
  const mp3 = createLameMp3(sampleRate, kbps);
  const held: Buffer[] = [];
  let samples = 0;
  return {
    push(pcm: Int16Array): Buffer {
      const input = resampled(pcm);
      samples += input.length;
      const frames = mp3.push(input);
      if (!complete) return frames;
      held.push(frames);
      return Buffer.alloc(0);
    },
    end(): Buffer {
      const last = mp3.end();
      if (!complete) return last;
      const audio = Buffer.concat([...held, last]);
      return Buffer.concat([mp3InfoFrame({ sampleRate, kbps, audio, samples }), audio]);
    },
  };
}

function wavEncoder(sampleRate: number, complete: boolean, resampled: (pcm: Int16Array) => Int16Array) {
  const held: Buffer[] = [];
  let headerSent = false;
  return {
    push(pcm: Int16Array): Buffer {
      const body = pcmBytes(resampled(pcm));
      if (complete) {
        held.push(body);
        return Buffer.alloc(0);
      }
      if (headerSent) return body;
      headerSent = true;
      return Buffer.concat([wavHeader(sampleRate), body]);
    },
    end(): Buffer {
      if (complete) {
        const data = Buffer.concat(held);
        return Buffer.concat([wavHeader(sampleRate, data.length), data]);
      }
      return headerSent ? Buffer.alloc(0) : wavHeader(sampleRate, 0);
    },
  };
}

export function createEncoder(format: OutputFormat, inputRate: number, options: EncoderOptions = {}): AudioEncoder {
  const { codec, sampleRate, kbps } = parseFormat(format);
  const resampled = (pcm: Int16Array) => resamplePcm16(pcm, inputRate, sampleRate);
  switch (codec) {
    case 'mp3':
      return mp3Encoder(sampleRate, kbps!, options.complete ?? false, resampled);
    case 'pcm':
      return { push: (pcm) => pcmBytes(resampled(pcm)), end: () => Buffer.alloc(0) };
    case 'ulaw':
      return { push: (pcm) => companded(resampled(pcm), linearToMuLaw), end: () => Buffer.alloc(0) };
    case 'alaw':
      return { push: (pcm) => companded(resampled(pcm), linearToALaw), end: () => Buffer.alloc(0) };
    case 'wav':
      return wavEncoder(sampleRate, options.complete ?? false, resampled);
    case 'opus': {
      const opus = createOggOpusEncoder(kbps!, inputRate);
      return { push: (pcm) => opus.push(resampled(pcm)), end: () => opus.end() };
    }
  }
}
