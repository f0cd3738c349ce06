/**
 * Windowed-sinc resampling of 16-bit mono PCM (band-limited interpolation): each output sample is
 * the input convolved with a Blackman-windowed sinc whose cutoff is the lower of the two Nyquist
 * frequencies (times 0.95), so a tone above the new Nyquist is filtered out instead of aliasing.
 * 16 zero crossings each side. A chunk is resampled on its own: the offline engine hands over whole
 * sentences that start and end in silence, so no state is carried between chunks.
 */

const ZERO_CROSSINGS = 16;

function blackman(x: number): number {
  // x in [-1, 1]
  return 0.42 + 0.5 * Math.cos(Math.PI * x) + 0.08 * Math.cos(2 * Math.PI * x);
}

function sinc(x: number): number {
  if (x === 0) return 1;
  const px = Math.PI * x;
  return Math.sin(px) / px;
}

export function resamplePcm16(input: Int16Array, from: number, to: number): Int16Array {
  if (from === to || input.length === 0) return input;
  const ratio = to / from;
  const cutoff = Math.min(1, ratio) * 0.95; // of the input's Nyquist
  const half = Math.ceil(ZERO_CROSSINGS / cutoff); // taps each side, in input samples
  const length = Math.max(1, Math.round(input.length * ratio));
  const out = new Int16Array(length);
  for (let i = 0; i < length; i++) {
    const center = i / ratio;
    const first = Math.max(0, Math.ceil(center - half));
    const last = Math.min(input.length - 1, Math.floor(center + half));
    let sum = 0;
    let weights = 0;
    for (let j = first; j <= last; j++) {
      const distance = j - center;
      const weight = cutoff * sinc(cutoff * distance) * blackman(distance / half);
      sum += input[j]! * weight;
      weights += weight;
    }
    // Normalizing by the kernel's sum keeps DC gain at 1 near the edges as well.
    const value = weights > 0 ? sum / weights : 0;
    out[i] = Math.max(-32768, Math.min(32767, Math.round(value)));
  }
  return out;
}
