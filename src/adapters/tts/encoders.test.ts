import { describe, expect, it } from 'vitest';
import { goertzel, parseMp3, sine } from '../../../test/helpers/audio.js';
import { aLawToLinear, linearToALaw, linearToMuLaw, muLawToLinear } from './g711.js';
import { createEncoder } from './encoders.js';
import { resamplePcm16 } from './resample.js';

describe('resamplePcm16', () => {
  it('keeps a 1 kHz tone at 1 kHz when going from 22050 to 8000 Hz', () => {
    const out = resamplePcm16(sine(1000, 22050, 1), 22050, 8000);
    expect(out.length).toBe(8000);
    expect(goertzel(out, 8000, 1000)).toBeGreaterThan(100 * goertzel(out, 8000, 1500));
  });

  it('filters out a 6 kHz tone instead of aliasing it when going to 8000 Hz (Nyquist 4 kHz)', () => {
    const tone = sine(6000, 22050, 1);
    const out = resamplePcm16(tone, 22050, 8000);
    // Sample dropping would fold 6 kHz onto 2 kHz at full strength.
    const aliased = goertzel(out, 8000, 2000);
    const reference = goertzel(resamplePcm16(sine(2000, 22050, 1), 22050, 8000), 8000, 2000);
    expect(aliased).toBeLessThan(reference / 1000);
  });

  it('keeps a tone when going up from 22050 to 44100 Hz', () => {
    const out = resamplePcm16(sine(3000, 22050, 0.5), 22050, 44100);
    expect(out.length).toBe(22050);
    expect(goertzel(out, 44100, 3000)).toBeGreaterThan(100 * goertzel(out, 44100, 19000));
  });
});

describe('G.711', () => {
  it('round-trips µ-law and A-law within the companding step', () => {
    for (const value of [0, 5, -5, 100, -100, 1000, -1000, 12345, -12345, 32000, -32000]) {
      expect(Math.abs(muLawToLinear(linearToMuLaw(value)) - value)).toBeLessThanOrEqual(
        Math.max(8, Math.abs(value) / 16),
      );
      expect(Math.abs(aLawToLinear(linearToALaw(value)) - value)).toBeLessThanOrEqual(
        Math.max(16, Math.abs(value) / 16),
      );
    }
  });
});

describe('createEncoder', () => {
  it('encodes MP3 at the format rate and bitrate, with the duration of the input', () => {
    const encoder = createEncoder('mp3_44100_128', 22050);
    const bytes = Buffer.concat([encoder.push(sine(440, 22050, 1)), encoder.push(sine(440, 22050, 1)), encoder.end()]);
    const mp3 = parseMp3(bytes);
    expect([...mp3.sampleRates]).toEqual([44100]);
    expect([...mp3.bitrates]).toEqual([128]);
    expect(mp3.durationS).toBeGreaterThan(1.95);
    expect(mp3.durationS).toBeLessThan(2.2);
  });

  it('writes a streamed WAV header with unknown sizes', () => {
    const encoder = createEncoder('wav_16000', 22050);
    const bytes = Buffer.concat([encoder.push(sine(440, 22050, 1)), encoder.end()]);
    expect(bytes.toString('latin1', 0, 4)).toBe('RIFF');
    expect(bytes.readUInt32LE(40)).toBe(0xffffffff);
    expect(bytes.readUInt32LE(24)).toBe(16000);
    expect(bytes.length).toBe(44 + 32000);
  });
});
