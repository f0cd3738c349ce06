/**
 * espeak-ng compiled to WebAssembly (npm `espeak-ng`, GPL-3.0, an optional dependency): one module
 * compiled and instantiated once per process, its command-line `main` called once per sentence
 * with `-v <voice> -s <wpm> -w <file> <text>`, the WAV read back from its in-memory file system.
 * The build exports only `main`, so between calls we put getopt's `optind` back to 0 (its address
 * is found once, at load, by watching which word moves from 1 to 3 when two arguments are parsed);
 * every call passes the same options so no flag of a previous call lingers. It is loaded in the
 * CPU pool's worker threads (./espeak.job.ts), one engine per thread; calls are synchronous on
 * that thread, so they never overlap.
 *
 * Same input, same audio: espeak-ng keeps state in C globals from one call to the next (the
 * pitch-flutter phase of wavegen.c, the echo buffer, the noise generator's seed, the phoneme and
 * voice caches), so a reused instance would make each sentence depend on what it said before —
 * another company's text included. The engine therefore puts its instance back as it was after
 * loading before every sentence: a snapshot of the linear memory (fixed at 32 MiB by this build,
 * it never grows) is copied back, all of it but the embedded data files (espeak-ng-data, which
 * the C code only reads: Emscripten serves them from that memory). After each sentence the copy
 * is scheduled for when the thread is next idle (`setImmediate`: after the job's chunks and its
 * end have been posted), so a request's audio does not wait for it; a sentence that finds the
 * instance still dirty copies first.
 */
import { readFile } from 'node:fs/promises';
import { endianness } from 'node:os';
import { createRequire } from 'node:module';
import path from 'node:path';
import { SpeechError } from '../../ports/speech.js';

export interface EspeakPcm {
  samples: Int16Array;
  sampleRate: number;
}

export interface EspeakEngine {
  /**
   * Synthesises one sentence from the engine's pristine state (a pure function of the arguments);
   * throws SpeechError when espeak-ng writes nothing.
   */
  speak(voice: string, wordsPerMinute: number, text: string): EspeakPcm;
  /** Puts the instance back to its pristine state now (speak does it itself when it was not). */
  reset(): void;
}

/** The part of the WebAssembly API used here (the project's TypeScript libs do not declare it). */
interface WasmApi {
  compile(bytes: Uint8Array): Promise<unknown>;
  instantiate(module: unknown, imports: object): Promise<{ exports: unknown }>;
}
const wasm = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;

interface MemFsNode {
  mode: number;
  contents?: Uint8Array | Record<string, MemFsNode>;
}
interface MemFs {
  root: MemFsNode;
  isFile(mode: number): boolean;
  isDir(mode: number): boolean;
}

interface Exports {
  memory: { buffer: ArrayBuffer };
  stackSave(): number;
  stackRestore(pointer: number): void;
  stackAlloc(size: number): number;
  __main_argc_argv(argc: number, argv: number): number;
}

const OUT = '/switchboard.wav';
const LITTLE_ENDIAN = endianness() === 'LE';
/** The engine's fixed wall-clock time (2024-01-01T00:00:00Z), advanced by a tick per reading. */
const CLOCK_EPOCH_MS = 1_704_067_200_000;
let loading: Promise<EspeakEngine> | null = null;
/** Where the package is, or null when the optional dependency is not installed. */
export function espeakPackageDir(): string | null {
  try {
    return path.dirname(createRequire(import.meta.url).resolve('espeak-ng'));
  } catch {
    return null;
  }
}

function callMain(exports: Exports, args: string[]): number {
  const saved = exports.stackSave();
  try {
    const pointers = args.map((arg) => {
      const bytes = new TextEncoder().encode(`${arg}\0`);
      const at = exports.stackAlloc(bytes.length);
      new Uint8Array(exports.memory.buffer).set(bytes, at);
      return at;
    });
    const argv = exports.stackAlloc((pointers.length + 1) * 4);
    const view = new DataView(exports.memory.buffer);
    pointers.forEach((at, i) => view.setUint32(argv + i * 4, at, true));
    view.setUint32(argv + pointers.length * 4, 0, true);
    return exports.__main_argc_argv(args.length, argv);
  } finally {
    exports.stackRestore(saved);
  }
}

function wavPcm(wav: Uint8Array): EspeakPcm {
  const buffer = Buffer.from(wav.buffer, wav.byteOffset, wav.byteLength);
  const sampleRate = buffer.readUInt32LE(24);
  let offset = 12;
  while (offset + 8 <= buffer.length && buffer.toString('latin1', offset, offset + 4) !== 'data') {
    offset += 8 + buffer.readUInt32LE(offset + 4);
  }
  const start = offset + 8;
  const count = Math.max(0, Math.floor((buffer.length - start) / 2));
  if (LITTLE_ENDIAN) {
    // One copy of the data into an aligned buffer of its own (no per-sample reads).
    const from = wav.byteOffset + start;
    return { samples: new Int16Array(wav.buffer.slice(from, from + count * 2)), sampleRate };
  }
  const samples = new Int16Array(count);
  for (let i = 0; i < count; i++) samples[i] = buffer.readInt16LE(start + i * 2);
  return { samples, sampleRate };
}

/**
 * The byte ranges of linear memory the engine may write: all of it but the embedded data files
 * (MEMFS nodes whose contents are views of the memory itself), merged and sorted.
 */
function writableRanges(fs: MemFs, memory: ArrayBuffer): Array<[number, number]> {
  const owned: Array<[number, number]> = [];
  const walk = (node: MemFsNode) => {
    if (fs.isDir(node.mode)) {
      for (const child of Object.values((node.contents ?? {}) as Record<string, MemFsNode>)) walk(child);
    } else if (fs.isFile(node.mode) && node.contents instanceof Uint8Array && node.contents.buffer === memory) {
      owned.push([node.contents.byteOffset, node.contents.byteOffset + node.contents.byteLength]);
    }
  };
  walk(fs.root);
  owned.sort((a, b) => a[0] - b[0]);
  const ranges: Array<[number, number]> = [];
  let from = 0;
  for (const [start, end] of owned) {
    if (start > from) ranges.push([from, start]);
    from = Math.max(from, end);
  }
  if (from < memory.byteLength) ranges.push([from, memory.byteLength]);
  return ranges;
}

async function load(dir: string): Promise<EspeakEngine> {
  const { default: factory } = await import('espeak-ng');
  const compiled = await wasm.compile(await readFile(path.join(dir, 'espeak-ng.wasm')));
  let exports: Exports | undefined;
  let ticks = 0;
  const module = await factory({
    noInitialRun: true,
    print: () => {},
    printErr: () => {},
    instantiateWasm(imports, done) {
      const env = (imports as { env: Record<string, unknown> }).env;
      // espeak-ng seeds its noise generator from the clock (time(NULL) at each initialisation):
      // the engine's clock is a counter, put back with the memory, so the seed never varies.
      env.emscripten_date_now = () => CLOCK_EPOCH_MS + ticks++;
      env.emscripten_get_now = () => ticks++;
      void wasm.instantiate(compiled, imports).then((instance) => {
        exports = instance.exports as unknown as Exports;
        done(instance, compiled);
      });
      return {};
    },
  });
  const ex = exports!;
  const before = new Int32Array(ex.memory.buffer.slice(0));
  callMain(ex, ['espeak-ng', '-w', OUT, 'a']);
  module.FS.unlink(OUT);
  const after = new Int32Array(ex.memory.buffer);
  const candidates: number[] = [];
  for (let i = 0; i < before.length && candidates.length < 2; i++)
    if (before[i] === 1 && after[i] === 3) candidates.push(i);
  if (candidates.length !== 1)
    throw new SpeechError('espeak-ng: this build of the module is not supported', 'unavailable');
  const optind = candidates[0]!;
  // The pristine state: after one call (voice data and dictionaries loaded), with optind reset.
  new Int32Array(ex.memory.buffer)[optind] = 0;
  const ranges = writableRanges(module.FS as unknown as MemFs, ex.memory.buffer);
  const pristine = ranges.map(([start, end]) => new Uint8Array(ex.memory.buffer.slice(start, end)));
  let dirty = false;
  let scheduled = false;
  const reset = () => {
    const memory = new Uint8Array(ex.memory.buffer);
    ranges.forEach(([start], i) => memory.set(pristine[i]!, start));
    ticks = 0;
    dirty = false;
  };
  const resetWhenIdle = () => {
    if (scheduled) return;
    scheduled = true;
    setImmediate(() => {
      scheduled = false;
      if (dirty) reset();
    });
  };
  ticks = 0;
  return {
    reset,
    speak(voice, wordsPerMinute, text) {
      if (dirty) reset();
      dirty = true;
      resetWhenIdle();
      // A leading space keeps text that starts with "-" from reading as an option.
      callMain(ex, ['espeak-ng', '-v', voice, '-s', String(wordsPerMinute), '-w', OUT, ` ${text}`]);
      let wav: Uint8Array;
      try {
        wav = module.FS.readFile(OUT);
        module.FS.unlink(OUT);
      } catch {
        throw new SpeechError(`espeak-ng produced no audio for voice ${voice}`, 'audio');
      }
      return wavPcm(wav);
    },
  };
}

/** The process's one engine, loaded on first use; throws SpeechError when the package is absent. */
export function espeakEngine(): Promise<EspeakEngine> {
  const dir = espeakPackageDir();
  if (!dir) {
    return Promise.reject(
      new SpeechError('The offline speech engine is not installed (npm install espeak-ng)', 'unavailable'),
    );
  }
  loading ??= load(dir).catch((error: unknown) => {
    loading = null;
    throw error;
  });
  return loading;
}
