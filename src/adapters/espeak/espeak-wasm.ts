/**
 * espeak-ng through its library API (npm `@echogarden/espeak-ng-emscripten`, GPL-3.0, an optional
 * dependency; Emscripten's build of espeak-ng to JavaScript, wasm2js): espeak-ng is initialised
 * once per thread (`espeak_Initialize`, through the package's `eSpeakNGWorker` binding), then each
 * sentence is one `set_voice`, one `set_rate` and one `espeak_Synth` whose samples come back through
 * a callback (which can stop it: a turn's first moment needs only the sentence's start). It is
 * loaded in the CPU pool's worker threads (./espeak.job.ts), one engine per thread; calls are
 * synchronous on that thread, so they never overlap. Its data files (24 MB, every language) are
 * read from the installed package; nothing is fetched.
 *
 * The binding synthesises with espeak's SSML and `[[phoneme]]` input on: the text is escaped as
 * XML so that it is read as text (`<`, `&` are spoken, never taken as markup). It also leaves out
 * espeak's end-of-text pause, which the command line adds and which separates our sentences when
 * they are played one after another: a closing `</s>` (or, after a clause mark such as a comma, an
 * empty comment) keeps the last clause from being the end of the input, so it gets the pause its
 * punctuation calls for, as before.
 *
 * Same input, same audio: espeak-ng keeps state in C globals from one call to the next (the
 * pitch-flutter phase of wavegen.c, the echo buffer, the noise generator, the phoneme and voice
 * caches), so a reused instance would make each sentence depend on what it said before — another
 * company's text included. The engine therefore puts the module's linear memory (an ArrayBuffer of
 * 16 MiB for this build) back as it was after initialisation before every sentence; pages it grew
 * by since are zeroed. No C state lives outside that memory: the binding's JavaScript side is used
 * only through pointers allocated inside the call (its string cache is never touched after the
 * snapshot) and one callback registered before it. After each sentence the copy (~1 ms) is
 * scheduled for when the thread is next idle (`setImmediate`: after the job's chunks and its end
 * have been posted), so a request's audio does not wait for it; a sentence that finds the instance
 * still dirty copies first. espeak-ng reads the clock once, to seed its noise at initialisation:
 * the clock is fixed then (and during every call), so every thread and process gives the same bytes.
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import { SpeechError } from '../../ports/speech.js';

export interface EspeakPcm {
  samples: Int16Array;
  sampleRate: number;
  /** False when the synthesis was stopped at `stopAfterSeconds` (the sentence goes on). */
  complete: boolean;
}

export interface EspeakEngine {
  /**
   * Synthesises one sentence from the engine's pristine state (a pure function of the arguments);
   * throws SpeechError when espeak-ng has no such voice. With `stopAfterSeconds`, synthesis stops
   * once that much audio is made (the samples run a little past it, up to espeak's next ~0.1 s
   * block): the same samples as the start of the whole sentence.
   */
  speak(voice: string, wordsPerMinute: number, text: string, stopAfterSeconds?: number): EspeakPcm;
  /** Puts the instance back to its pristine state now (speak does it itself when it was not). */
  reset(): void;
}

/** The npm package of the engine (an optional dependency). */
export const ESPEAK_PACKAGE = '@echogarden/espeak-ng-emscripten';

/** A C pointer as the binding takes it in place of a string it would copy itself. */
interface Pointer {
  ptr: number;
}
interface SpeakerBinding {
  readonly samplerate: number;
  set_voice(name: Pointer | string): number;
  set_rate(wordsPerMinute: number): void;
  synth_(text: Pointer, callback: number): void;
  list_voices(): VoiceEntry[];
}
export interface VoiceEntry {
  name: string;
  identifier: string;
  languages: Array<{ priority: number; name: string }>;
}
interface EspeakModule {
  eSpeakNGWorker: new () => SpeakerBinding;
  HEAPU8: Uint8Array;
  HEAP16: Int16Array;
  _malloc(size: number): number;
  addFunction(fn: (samples: number, count: number, events: number) => number, signature: string): number;
}

/** The engine's fixed wall-clock time (2024-01-01T00:00:00Z), advanced by a tick per reading. */
const CLOCK_EPOCH_MS = 1_704_067_200_000;
let loading: Promise<EspeakEngine> | null = null;

/** Where the package is, or null when the optional dependency is not installed. */
export function espeakPackageDir(): string | null {
  try {
    return path.dirname(createRequire(import.meta.url).resolve(ESPEAK_PACKAGE));
  } catch {
    return null;
  }
}

function unsupported(why: string): SpeechError {
  return new SpeechError(`espeak-ng: this build of ${ESPEAK_PACKAGE} is not supported (${why})`, 'unavailable');
}

/**
 * Runs `call` with the clock fixed: espeak-ng seeds its noise generator from the time when it is
 * initialised, and the module's only clock is `Date.now` (read at each call, on this thread alone).
 */
function atFixedTime<T>(call: () => T): T {
  const now = Date.now;
  Date.now = () => CLOCK_EPOCH_MS;
  try {
    return call();
  } finally {
    Date.now = now;
  }
}

/**
 * Text for the binding's SSML reader: escaped, and closed so that its last clause keeps its pause
 * (see the header).
 */
export function ssmlText(text: string): string {
  const escaped = text.trimEnd().replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  const last = escaped.replace(/["')\]»”’]+$/u, '');
  return /([,;:،؛…]|\.\.\.)$/u.test(last) ? `${escaped}<!-- -->` : `${escaped} </s>`;
}

/**
 * The name to give `set_voice` for `<voice>[+<variant>]`, resolved from the voice list alone (a
 * failed `set_voice` would leave state behind): espeak-ng finds a voice by its name or file name
 * (`en-us`, `gmw/en`); a language that it names only inside a voice file (`en-gb`, spoken by
 * gmw/en) goes to the voice that speaks it first, with the same variant.
 */
export function voiceResolver(voices: readonly VoiceEntry[]): (voice: string) => string {
  const known = new Set<string>();
  const byLanguage = new Map<string, { identifier: string; priority: number }>();
  for (const { name, identifier, languages } of voices) {
    for (const key of [name, identifier, identifier.slice(identifier.lastIndexOf('/') + 1)])
      known.add(key.toLowerCase());
    for (const language of languages) {
      const best = byLanguage.get(language.name);
      if (!best || language.priority < best.priority)
        byLanguage.set(language.name, { identifier, priority: language.priority });
    }
  }
  return (voice) => {
    const [base = '', ...variant] = voice.split('+');
    if (known.has(base.toLowerCase())) return voice;
    const identifier = byLanguage.get(base.toLowerCase())?.identifier;
    return identifier ? [identifier, ...variant].join('+') : voice;
  };
}

async function load(): Promise<EspeakEngine> {
  const { default: factory } = (await import(ESPEAK_PACKAGE)) as {
    default: (options: object) => Promise<EspeakModule>;
  };
  const module = await factory({ print: () => {}, printErr: () => {} });
  const binding = atFixedTime(() => new module.eSpeakNGWorker());
  const sampleRate = binding.samplerate;
  // The binding's string cache is allocated by its first string call, before the snapshot; every
  // later call passes pointers of ours, so the cache never changes again.
  if (binding.set_voice('en-us') !== 0) throw unsupported('no en-us voice');
  const voiceName = voiceResolver(binding.list_voices());
  let collected: Int16Array[] = [];
  let collectedSamples = 0;
  let stopAt = Infinity;
  // Called by espeak_Synth for every ~0.1 s of audio; a non-zero answer stops the synthesis.
  const callback = module.addFunction((samples, count) => {
    if (count > 0) {
      collected.push(module.HEAP16.slice(samples >> 1, (samples >> 1) + count));
      collectedSamples += count;
    }
    return collectedSamples >= stopAt ? 1 : 0;
  }, 'iiii');
  const encoder = new TextEncoder();
  const cString = (text: string): Pointer => {
    const bytes = encoder.encode(text);
    const at = module._malloc(bytes.length + 1);
    module.HEAPU8.set(bytes, at);
    module.HEAPU8[at + bytes.length] = 0;
    return { ptr: at };
  };

  const pristine = module.HEAPU8.slice();
  let dirty = false;
  let scheduled = false;
  const reset = () => {
    const memory = module.HEAPU8;
    memory.set(pristine);
    if (memory.length > pristine.length) memory.fill(0, pristine.length);
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
  return {
    reset,
    speak(voice, wordsPerMinute, text, stopAfterSeconds) {
      if (dirty) reset();
      dirty = true;
      resetWhenIdle();
      if (binding.set_voice(cString(voiceName(voice))) !== 0)
        throw new SpeechError(`espeak-ng has no voice ${voice}`, 'audio');
      binding.set_rate(wordsPerMinute);
      collected = [];
      collectedSamples = 0;
      stopAt = stopAfterSeconds === undefined ? Infinity : Math.ceil(stopAfterSeconds * sampleRate);
      atFixedTime(() => binding.synth_(cString(ssmlText(text)), callback));
      const parts = collected;
      const complete = collectedSamples < stopAt;
      collected = [];
      const samples = new Int16Array(parts.reduce((sum, part) => sum + part.length, 0));
      let offset = 0;
      for (const part of parts) {
        samples.set(part, offset);
        offset += part.length;
      }
      return { samples, sampleRate, complete };
    },
  };
}

/** The thread's one engine, loaded on first use; throws SpeechError when the package is absent. */
export function espeakEngine(): Promise<EspeakEngine> {
  if (!espeakPackageDir()) {
    return Promise.reject(
      new SpeechError(`The offline speech engine is not installed (npm install ${ESPEAK_PACKAGE})`, 'unavailable'),
    );
  }
  loading ??= load().catch((error: unknown) => {
    loading = null;
    throw error;
  });
  return loading;
}
