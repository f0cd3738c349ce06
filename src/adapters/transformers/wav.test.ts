import { describe, expect, it } from 'vitest';
import { SpeechError } from '../../ports/speech.js';
import { decodeWav, resample } from './wav.js';

interface WavSpec {
  code?: number;
  channels?: number;
  sampleRate?: number;
  bits: number;
  /** Frames of samples per channel, already encoded by `write`. */
  frames: number[][];
  extensible?: boolean;
  /** Chunks placed before `fmt `, such as an odd-sized LIST. */
  before?: Buffer;
  dataSize?: number;
}

function wav(spec: WavSpec, write: (buffer: Buffer, at: number, value: number) => void): Buffer {
  const channels = spec.channels ?? spec.frames[0]?.length ?? 1;
  const width = spec.bits / 8;
  const data = Buffer.alloc(spec.frames.length * channels * width);
  spec.frames.forEach((frame, i) => frame.forEach((value, c) => write(data, (i * channels + c) * width, value)));
  const fmt = Buffer.alloc(spec.extensible ? 40 : 16);
  fmt.writeUInt16LE(spec.extensible ? 0xfffe : (spec.code ?? 1), 0);
  fmt.writeUInt16LE(channels, 2);
  fmt.writeUInt32LE(spec.sampleRate ?? 16_000, 4);
  fmt.writeUInt32LE((spec.sampleRate ?? 16_000) * channels * width, 8);
  fmt.writeUInt16LE(channels * width, 12);
  fmt.writeUInt16LE(spec.bits, 14);
  if (spec.extensible) {
    fmt.writeUInt16LE(22, 16);
    fmt.writeUInt16LE(spec.code ?? 1, 24);
  }
  const chunk = (id: string, body: Buffer, size = body.length) => {
    const head = Buffer.alloc(8);
    head.write(id, 0, 'latin1');
    head.writeUInt32LE(size, 4);
    return Buffer.concat([head, body, body.length % 2 ? Buffer.alloc(1) : Buffer.alloc(0)]);
  };
  const body = Buffer.concat([
    Buffer.from('WAVE'),
    spec.before ?? Buffer.alloc(0),
    chunk('fmt ', fmt),
    chunk('data', data, spec.dataSize),
  ]);
  return Buffer.concat([Buffer.from('RIFF'), Buffer.from(new Uint32Array([body.length]).buffer), body]);
}

const int16 = (b: Buffer, at: number, v: number) => b.writeInt16LE(v, at);

describe('decodeWav', () => {
  it('reads 16-bit PCM at 16 kHz as is, scaled to [-1, 1)', () => {
    const samples = decodeWav(wav({ bits: 16, frames: [[0], [16384], [-32768], [32767]] }, int16));
    expect(Array.from(samples)).toEqual([0, 0.5, -1, 32767 / 32768]);
  });

  it('averages channels, and reads 8-, 24- and 32-bit PCM and 32/64-bit float alike', () => {
    const stereo = decodeWav(
      wav(
        {
          bits: 16,
          frames: [
            [16384, -16384],
            [16384, 16384],
          ],
        },
        int16,
      ),
    );
    expect(Array.from(stereo)).toEqual([0, 0.5]);
    const encodings: [number, number, (b: Buffer, at: number, v: number) => void, number[]][] = [
      [1, 8, (b, at, v) => b.writeUInt8(v, at), [128, 192]],
      [1, 24, (b, at, v) => b.writeIntLE(v, at, 3), [0, 4194304]],
      [1, 32, (b, at, v) => b.writeInt32LE(v, at), [0, 1073741824]],
      [3, 32, (b, at, v) => b.writeFloatLE(v, at), [0, 0.5]],
      [3, 64, (b, at, v) => b.writeDoubleLE(v, at), [0, 0.5]],
    ];
    for (const [code, bits, write, values] of encodings) {
      expect(
        Array.from(decodeWav(wav({ code, bits, frames: values.map((v) => [v]) }, write))),
        `${code}/${bits}`,
      ).toEqual([0, 0.5]);
      expect(
        Array.from(decodeWav(wav({ code, bits, frames: values.map((v) => [v]), extensible: true }, write))),
        `extensible ${code}/${bits}`,
      ).toEqual([0, 0.5]);
    }
  });

  it('skips other chunks (odd sizes padded) and reads a data chunk whose size was never filled in', () => {
    const list = Buffer.concat([Buffer.from('LIST'), Buffer.from([3, 0, 0, 0]), Buffer.from('abc'), Buffer.alloc(1)]);
    expect(Array.from(decodeWav(wav({ bits: 16, frames: [[16384], [0]], before: list }, int16)))).toEqual([0.5, 0]);
    expect(Array.from(decodeWav(wav({ bits: 16, frames: [[16384], [0]], dataSize: 0xffffffff }, int16)))).toEqual([
      0.5, 0,
    ]);
  });

  it('resamples 48 kHz to 16 kHz: a third of the frames, the tone kept', () => {
    const frames = Array.from({ length: 4800 }, (_, i) => [
      Math.round(16000 * Math.sin((2 * Math.PI * 440 * i) / 48_000)),
    ]);
    const samples = decodeWav(wav({ bits: 16, sampleRate: 48_000, frames }, int16));
    expect(samples.length).toBe(1600);
    const peak = Math.max(...Array.from(samples).map(Math.abs));
    expect(peak).toBeGreaterThan(0.45);
    expect(peak).toBeLessThan(0.5);
    // The 440 Hz tone still crosses zero about 2 × 440 × 0.1 s = 88 times.
    let crossings = 0;
    for (let i = 1; i < samples.length; i++) if (Math.sign(samples[i]!) !== Math.sign(samples[i - 1]!)) crossings++;
    expect(crossings).toBeGreaterThanOrEqual(86);
    expect(crossings).toBeLessThanOrEqual(90);
  });

  it('upsamples 8 kHz by interpolation', () => {
    expect(Array.from(resample(Float32Array.from([0, 1, 0]), 8000, 16_000))).toEqual([0, 0.5, 1, 0.5, 0, 0]);
  });

  it.each([
    [Buffer.from('ID3\x03\x00\x00\x00'), 'format', /not a WAV file/],
    [wav({ code: 2, bits: 4, frames: [] }, () => undefined), 'format', /WAV encoding 2 with 4 bits is not supported/],
    [wav({ bits: 16, frames: [[0]] }, int16).subarray(0, 36), 'audio', /no data chunk/],
    [Buffer.concat([Buffer.from('RIFF'), Buffer.alloc(4), Buffer.from('WAVE')]), 'audio', /no format chunk/],
    [wav({ bits: 16, sampleRate: 10, frames: [[0]] }, int16), 'audio', /declares 1 channels at 10 Hz/],
  ])('refuses %#', (buffer, failure, message) => {
    let caught: unknown;
    try {
      decodeWav(buffer);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(SpeechError);
    expect((caught as SpeechError).failure).toBe(failure);
    expect((caught as SpeechError).message).toMatch(message);
  });
});
