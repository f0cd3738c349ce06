/**
 * WAV (RIFF) audio to the mono 16 kHz float samples Whisper reads. PCM of 8, 16, 24 or 32 bits
 * and IEEE float of 32 or 64 bits, plain or WAVE_FORMAT_EXTENSIBLE; channels are averaged and the
 * signal resampled by linear interpolation (after a box filter when shrinking, against aliasing).
 */
import { SpeechError } from '../../ports/speech.js';

export const WHISPER_SAMPLE_RATE = 16_000;

const PCM = 1;
const FLOAT = 3;
const EXTENSIBLE = 0xfffe;

export function isWav(buffer: Buffer): boolean {
  return (
    buffer.length >= 12 && buffer.toString('latin1', 0, 4) === 'RIFF' && buffer.toString('latin1', 8, 12) === 'WAVE'
  );
}

interface Format {
  code: number;
  channels: number;
  sampleRate: number;
  bits: number;
}

function readFormat(buffer: Buffer, offset: number, size: number): Format {
  if (size < 16) throw new SpeechError('The WAV file has a truncated format chunk', 'audio');
  let code = buffer.readUInt16LE(offset);
  if (code === EXTENSIBLE && size >= 26) code = buffer.readUInt16LE(offset + 24);
  return {
    code,
    channels: buffer.readUInt16LE(offset + 2),
    sampleRate: buffer.readUInt32LE(offset + 4),
    bits: buffer.readUInt16LE(offset + 14),
  };
}

function sampleReader(buffer: Buffer, format: Format): (offset: number) => number {
  if (format.code === PCM) {
    switch (format.bits) {
      case 8:
        return (at) => (buffer.readUInt8(at) - 128) / 128;
      case 16:
        return (at) => buffer.readInt16LE(at) / 32768;
      case 24:
        return (at) => buffer.readIntLE(at, 3) / 8388608;
      case 32:
        return (at) => buffer.readInt32LE(at) / 2147483648;
    }
  }
  if (format.code === FLOAT) {
    if (format.bits === 32) return (at) => buffer.readFloatLE(at);
    if (format.bits === 64) return (at) => buffer.readDoubleLE(at);
  }
  throw new SpeechError(
    `WAV encoding ${format.code} with ${format.bits} bits is not supported: send PCM (8–32 bits) or float WAV`,
    'format',
  );
}

/** Decodes a WAV file to mono samples at WHISPER_SAMPLE_RATE; throws SpeechError. */
export function decodeWav(buffer: Buffer): Float32Array {
  if (!isWav(buffer)) throw new SpeechError('The audio is not a WAV file', 'format');
  let format: Format | null = null;
  let data: { offset: number; size: number } | null = null;
  for (let offset = 12; offset + 8 <= buffer.length && !data;) {
    const id = buffer.toString('latin1', offset, offset + 4);
    const size = buffer.readUInt32LE(offset + 4);
    const body = offset + 8;
    if (id === 'fmt ') format = readFormat(buffer, body, Math.min(size, buffer.length - body));
    // A streamed recording may leave the data size unset or too large: read what is there.
    if (id === 'data') data = { offset: body, size: Math.min(size, buffer.length - body) };
    offset = body + size + (size % 2);
  }
  if (!format) throw new SpeechError('The WAV file has no format chunk', 'audio');
  if (!data) throw new SpeechError('The WAV file has no data chunk', 'audio');
  if (format.channels < 1 || format.sampleRate < 1000 || format.sampleRate > 384_000) {
    throw new SpeechError(`The WAV file declares ${format.channels} channels at ${format.sampleRate} Hz`, 'audio');
  }
  const read = sampleReader(buffer, format);
  const width = format.bits / 8;
  const frame = width * format.channels;
  const frames = Math.floor(data.size / frame);
  const mono = new Float32Array(frames);
  for (let i = 0; i < frames; i++) {
    let sum = 0;
    for (let channel = 0; channel < format.channels; channel++) sum += read(data.offset + i * frame + channel * width);
    mono[i] = sum / format.channels;
  }
  return resample(mono, format.sampleRate, WHISPER_SAMPLE_RATE);
}

export function resample(samples: Float32Array, from: number, to: number): Float32Array {
  if (from === to || samples.length === 0) return samples;
  const ratio = from / to;
  let source = samples;
  const box = Math.floor(ratio);
  if (box > 1) {
    // Average each sample with its neighbours over one output period before picking.
    source = new Float32Array(samples.length);
    let sum = 0;
    for (let i = 0; i < samples.length; i++) {
      sum += samples[i]!;
      if (i >= box) sum -= samples[i - box]!;
      source[i] = sum / Math.min(i + 1, box);
    }
  }
  const length = Math.max(1, Math.floor(samples.length / ratio));
  const out = new Float32Array(length);
  for (let i = 0; i < length; i++) {
    const position = i * ratio;
    const left = Math.floor(position);
    const right = Math.min(left + 1, source.length - 1);
    const weight = position - left;
    out[i] = source[left]! * (1 - weight) + source[right]! * weight;
  }
  return out;
}
