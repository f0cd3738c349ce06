/**
 * Windowed-sinc resampling of 16-bit mono PCM (band-limited interpolation): each output sample is
 * the input convolved with a Blackman-windowed sinc whose cutoff is the lower of the two Nyquist
 * frequencies (times 0.95), so a tone above the new Nyquist is filtered out instead of aliasing.
 * 16 zero crossings each side. For a rational ratio (every pair of the formats' rates) the kernel is
 * evaluated once per phase, its weights normalised to sum 1, so each output sample is one dot
 * product; near the ends (taps outside the input) and for ratios of very many phases the kernel is
 * tabulated once per ratio (256 entries per sample) and normalised by the taps in range. A chunk
 * is resampled on its own: the offline engine hands over whole sentences (or a sentence cut at its
 * quietest moment) that start and end near silence, so no state is carried between chunks.
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

const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));
/** Past this many phases (output positions between two input samples) the table path is used. */
const MAX_PHASES = 4096;

interface Polyphase {
  /** to / gcd and from / gcd: output i sits at input position i·down/up. */
  up: number;
  down: number;
  /** Per phase: the first tap's offset from floor(position), and the taps' weights (normalised to sum 1). */
  first: Int32Array;
  weights: Float64Array[];
}
const polyphases = new Map<string, Polyphase | null>();

/**
 * The kernel for a rational ratio, one set of weights per phase (the sinc evaluated exactly, not
 * interpolated): the inner loop is then one multiply-add per tap, with no table look-up.
 */
function polyphaseFor(from: number, to: number): Polyphase | null {
  const key = `${from}:${to}`;
  if (polyphases.has(key)) return polyphases.get(key)!;
  const divisor = gcd(from, to);
  const up = to / divisor;
  const down = from / divisor;
  let kernel: Polyphase | null = null;
  if (up <= MAX_PHASES) {
    const cutoff = Math.min(1, to / from) * 0.95;
    const half = Math.ceil(ZERO_CROSSINGS / cutoff);
    const first = new Int32Array(up);
    const weights: Float64Array[] = [];
    for (let phase = 0; phase < up; phase++) {
      const fraction = phase / up;
      const firstTap = Math.ceil(fraction - half);
      const last = Math.floor(fraction + half);
      const taps = new Float64Array(last - firstTap + 1);
      let sum = 0;
      for (let k = firstTap; k <= last; k++) {
        const distance = Math.abs(k - fraction);
        const weight = distance > half ? 0 : cutoff * sinc(cutoff * distance) * blackman(distance / half);
        taps[k - firstTap] = weight;
        sum += weight;
      }
      for (let k = 0; k < taps.length; k++) taps[k] = taps[k]! / sum;
      first[phase] = firstTap;
      weights.push(taps);
    }
    kernel = { up, down, first, weights };
  }
  polyphases.set(key, kernel);
  return kernel;
}

export function resamplePcm16(input: Int16Array, from: number, to: number): Int16Array {
  if (from === to || input.length === 0) return input;
  const poly = polyphaseFor(from, to);
  if (!poly) return resampleByTable(input, from, to);
  const { up, down, first, weights } = poly;
  const length = Math.max(1, Math.round((input.length * to) / from));
  const out = new Int16Array(length);
  const edge = resampleByTable;
  for (let i = 0; i < length; i++) {
    const position = i * down;
    const base = Math.floor(position / up);
    const phase = position - base * up;
    const start = base + first[phase]!;
    const taps = weights[phase]!;
    if (start < 0 || start + taps.length > input.length) {
      // Near the ends some taps fall outside: the table path, normalised by the taps that exist.
      out[i] = edge(input, from, to, i, i + 1)[0]!;
      continue;
    }
    let sum = 0;
    for (let k = 0; k < taps.length; k++) sum += input[start + k]! * taps[k]!;
    out[i] = Math.max(-32768, Math.min(32767, Math.round(sum)));
  }
  return out;
}

/** Output samples `begin`…`end` (all by default) by the tabulated kernel, each normalised by the weights of the taps in range. */
function resampleByTable(input: Int16Array, from: number, to: number, begin = 0, end?: number): Int16Array {
  const ratio = to / from;
  const { table, half } = kernelFor(from, to);
  const length = end ?? Math.max(1, Math.round(input.length * ratio));
  const out = new Int16Array(length - begin);
  for (let i = begin; i < length; i++) {
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
    out[i - begin] = Math.max(-32768, Math.min(32767, Math.round(value)));
  }
  return out;
}
