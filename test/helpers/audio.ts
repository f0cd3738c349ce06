/** Test readers of the audio we produce: MP3 frame headers, Goertzel tone power. */

const MPEG1_L3_KBPS = [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320];
const MPEG2_L3_KBPS = [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160];
const MPEG1_RATES = [44100, 48000, 32000];
const MPEG2_RATES = [22050, 24000, 16000];

export interface Mp3Summary {
  frames: number;
  sampleRates: Set<number>;
  bitrates: Set<number>;
  durationS: number;
}

/** Walks MP3 frames from the start (sync word, MPEG version, Layer III), summing their durations. */
export function parseMp3(buffer: Buffer): Mp3Summary {
  const summary: Mp3Summary = { frames: 0, sampleRates: new Set(), bitrates: new Set(), durationS: 0 };
  let offset = 0;
  while (offset + 4 <= buffer.length) {
    const header = buffer.readUInt32BE(offset);
    if (header >>> 21 !== 0x7ff) throw new Error(`no MP3 sync word at byte ${offset}`);
    const version = (header >>> 19) & 3; // 3 = MPEG1, 2 = MPEG2
    const layer = (header >>> 17) & 3; // 1 = Layer III
    if (layer !== 1 || (version !== 3 && version !== 2)) throw new Error(`not MPEG-1/2 Layer III at ${offset}`);
    const mpeg1 = version === 3;
    const kbps = (mpeg1 ? MPEG1_L3_KBPS : MPEG2_L3_KBPS)[(header >>> 12) & 15]!;
    const rate = (mpeg1 ? MPEG1_RATES : MPEG2_RATES)[(header >>> 10) & 3]!;
    const padding = (header >>> 9) & 1;
    const length = Math.floor(((mpeg1 ? 144 : 72) * kbps * 1000) / rate) + padding;
    summary.frames++;
    summary.sampleRates.add(rate);
    summary.bitrates.add(kbps);
    summary.durationS += (mpeg1 ? 1152 : 576) / rate;
    offset += length;
  }
  return summary;
}

/** Relative power of `frequency` in the signal (Goertzel), normalised by the signal's length. */
export function goertzel(samples: ArrayLike<number>, sampleRate: number, frequency: number): number {
  const coefficient = 2 * Math.cos((2 * Math.PI * frequency) / sampleRate);
  let previous = 0;
  let beforePrevious = 0;
  for (let i = 0; i < samples.length; i++) {
    const value = samples[i]! + coefficient * previous - beforePrevious;
    beforePrevious = previous;
    previous = value;
  }
  const power = previous * previous + beforePrevious * beforePrevious - coefficient * previous * beforePrevious;
  return power / (samples.length * samples.length);
}

/** A sine of `frequency` Hz as 16-bit PCM. */
export function sine(frequency: number, sampleRate: number, seconds: number, amplitude = 16000): Int16Array {
  const out = new Int16Array(Math.round(sampleRate * seconds));
  for (let i = 0; i < out.length; i++)
    out[i] = Math.round(amplitude * Math.sin((2 * Math.PI * frequency * i) / sampleRate));
  return out;
}
