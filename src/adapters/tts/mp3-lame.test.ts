import { describe, expect, it } from 'vitest';
import { parseMp3, sine } from '../../../test/helpers/audio.js';
import { OUTPUT_FORMATS } from '../../ports/text-to-speech.js';
import { createEncoder, parseFormat } from './encoders.js';
import { countMp3Frames, LAME_ENCODER_DELAY, samplesPerFrame } from './mp3-info.js';
import { createLameMp3 } from './mp3-lame.js';

function encodeAll(sampleRate: number, kbps: number, parts: Int16Array[]): Buffer {
  const mp3 = createLameMp3(sampleRate, kbps);
  return Buffer.concat([...parts.map((pcm) => mp3.push(pcm)), mp3.end()]);
}

/** A tone that glides, so that no two windows are alike. */
function chirp(sampleRate: number, seconds: number): Int16Array {
  const out = new Int16Array(Math.round(sampleRate * seconds));
  for (let i = 0; i < out.length; i++) {
    const t = i / sampleRate;
    out[i] = Math.round(12000 * Math.sin(2 * Math.PI * (200 + 900 * t) * t));
  }
  return out;
}

describe('LAME in WebAssembly', () => {
  it.each(OUTPUT_FORMATS.filter((format) => format.startsWith('mp3_')).map((format) => [format]))(
    '%s: frames at the format rate and bitrate, as many as the samples need',
    (format) => {
      const { sampleRate, kbps } = parseFormat(format);
      const pcm = chirp(sampleRate, 1.3);
      const bytes = encodeAll(sampleRate, kbps!, [pcm.subarray(0, 1000), pcm.subarray(1000)]);
      const mp3 = parseMp3(bytes);
      expect([...mp3.sampleRates]).toEqual([sampleRate]);
      expect([...mp3.bitrates]).toEqual([kbps]);
      // Encoder delay + samples, padded to whole frames (the info frame's padding fits 12 bits).
      const padding = countMp3Frames(bytes) * samplesPerFrame(sampleRate) - LAME_ENCODER_DELAY - pcm.length;
      expect(padding).toBeGreaterThanOrEqual(0);
      expect(padding).toBeLessThan(4096);
    },
  );

  it('gives the same bytes for the same input, whatever the thread’s instance encoded before or holds open', () => {
    const pcm = chirp(44100, 1);
    const first = encodeAll(44100, 128, [pcm]);
    // Other files, another rate, one left open (never ended) and one ended half way through another.
    encodeAll(22050, 32, [chirp(22050, 2), sine(440, 22050, 0.5)]);
    const open = createLameMp3(24000, 48);
    open.push(chirp(24000, 0.7));
    const interleaved = createLameMp3(44100, 128);
    const parts = [interleaved.push(pcm.subarray(0, 20000))];
    open.push(sine(1000, 24000, 0.3));
    parts.push(interleaved.push(pcm.subarray(20000)), interleaved.end());
    expect(Buffer.concat(parts)).toEqual(first);
    expect(encodeAll(44100, 128, [pcm])).toEqual(first);
    // Split differently into pushes: the same stream.
    expect(encodeAll(44100, 128, [pcm.subarray(0, 1), pcm.subarray(1, 5000), pcm.subarray(5000)])).toEqual(first);
  });

  it('makes complete files led by the info frame through createEncoder', () => {
    const encoder = createEncoder('mp3_44100_32', 22050, { complete: true });
    expect(encoder.push(sine(440, 22050, 1)).length).toBe(0);
    const bytes = encoder.end();
    // The Xing "Info" tag after MPEG-1 mono side info, then LAME's.
    expect(bytes.toString('latin1', 4 + 17, 4 + 21)).toBe('Info');
    expect(bytes.toString('latin1', 4 + 17 + 120, 4 + 17 + 129)).toBe('LAME3.100');
    expect([...parseMp3(bytes).sampleRates]).toEqual([44100]);
  });

  it('refuses to encode after its end and refuses what LAME cannot make', () => {
    const mp3 = createLameMp3(22050, 32);
    mp3.end();
    expect(() => mp3.push(sine(440, 22050, 0.1))).toThrow(/already ended/);
    expect(mp3.end().length).toBe(0);
    expect(() => createLameMp3(44100, 8)).toThrow(/no MP3 frames of 8 kb\/s at 44100 Hz/);
    expect(() => createLameMp3(22050, 192)).toThrow(/no MP3 frames/);
    expect(() => createLameMp3(8000, 32)).toThrow(/no MP3 frames/);
  });
});
