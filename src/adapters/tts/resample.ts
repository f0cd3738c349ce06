/**
 * Windowed-sinc resampling of 16-bit mono PCM (band-limited interpolation): each output sample is
 * the input convolved with a Blackman-windowed sinc whose cutoff is the lower of the two Nyquist
 * frequencies (times 0.95), so a tone above the new Nyquist is filtered out instead of aliasing.
 * 16 zero crossings each side; the kernel is tabulated once per ratio (256 entries per sample). A chunk is resampled on its own: the offline engine hands over whole
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

const STEPS = 256; // table entries per input sample of distance
const kernels = new Map<string, { table: Float64Array; half: number }>();

/** The windowed-sinc kernel for one ratio, tabulated over distances 0…half (linear interpolation between entries). */
function kernelFor(from: number, to: number) {
  const key = `${from}:${to}`;
  let kernel = kernels.get(key);
  if (!kernel) {
    const cutoff = Math.min(1, to / from) * 0.95; // of the input's Nyquist
    const half = Math.ceil(ZERO_CROSSINGS / cutoff); // taps each side, in input samples
    const table = new Float64Array(half * STEPS + 2);
    for (let i = 0; i < table.length; i++) {
      const distance = i / STEPS;
      table[i] = distance > half ? 0 : cutoff * sinc(cutoff * distance) * blackman(distance / half);
    }
    kernel = { table, half };
    kernels.set(key, kernel);
  }
  return kernel;
}

export function resamplePcm16(input: Int16Array, from: number, to: number): Int16Array {
  if (from === to || input.length === 0) return input;
  const ratio = to / from;
  const { table, half } = kernelFor(from, to);
  const length = Math.max(1, Math.round(input.length * ratio));
  const out = new Int16Array(length);
  for (let i = 0; i < length; i++) {
    const center = i / ratio;
    const first = Math.max(0, Math.ceil(center - half));
    const last = Math.min(input.length - 1, Math.floor(center + half));
    let sum = 0;
    let weights = 0;
    for (let j = first; j <= last; j++) {
      const position = Math.abs(j - center) * STEPS;
      const index = Math.floor(position);
      const fraction = position - index;
      const weight = table[index]! + (table[index + 1]! - table[index]!) * fraction;
      sum += input[j]! * weight;
      weights += weight;
    }
    // Normalizing by the kernel's sum keeps DC gain at 1 near the edges as well.
    const value = weights > 0 ? sum / weights : 0;
    out[i] = Math.max(-32768, Math.min(32767, Math.round(value)));
  }
  return out;
}
