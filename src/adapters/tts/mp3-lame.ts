/**
 * MP3 by LAME 3.100 compiled to WebAssembly: the `mp3.wasm` that the npm package
 * `wasm-media-encoders` ships (MIT; LAME itself is LGPL-2.0-or-later, see docs/decisions.md),
 * driven through its small C interface (`enc_init`, `enc_get_pcm`, `enc_encode`, `enc_flush`,
 * `enc_free`) by this file rather than by the package's JavaScript, whose instantiation is
 * asynchronous: here the module is compiled and instantiated synchronously, once per thread (each
 * CPU-pool worker has its own), on the first MP3 encode, then reused.
 *
 * Every encoder gets its own LAME state (`enc_init`, constant bitrate, output rate = input rate, so
 * LAME never resamples, no tags) and frees it at `end()`, so a file's bytes depend on its input
 * alone, whatever was encoded before on the thread (tested). An encoder dropped without `end()`
 * (a job that failed half way) has its state freed when it is garbage collected.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { isMp3Bitrate } from './mp3-info.js';

/** The package version whose C interface this file speaks (checked against the module's own). */
const WASM_VERSION = 'wasm-media-encoders-0.7.0';

/** The part of the WebAssembly API used here (the project's TypeScript libs do not declare it). */
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: unknown };
}
const wasmApi = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;

interface LameExports {
  memory: { buffer: ArrayBuffer };
  version(): number;
  malloc(bytes: number): number;
  free(pointer: number): void;
  enc_init(params: number): number;
  enc_get_pcm(ref: number, samples: number): number;
  enc_get_out_buf(ref: number): number;
  enc_encode(ref: number, samples: number): number;
  enc_flush(ref: number): number;
  enc_free(ref: number): void;
  _initialize(): void;
}

let instance: LameExports | null = null;

function cString(lame: LameExports, pointer: number): string {
  const bytes = new Uint8Array(lame.memory.buffer, pointer);
  return Buffer.from(bytes.subarray(0, bytes.indexOf(0))).toString('latin1');
}

/** This thread's LAME instance, compiled and instantiated on first use. */
function lame(): LameExports {
  if (instance) return instance;
  const file = createRequire(import.meta.url).resolve('wasm-media-encoders/wasm/mp3');
  const module = new wasmApi.Module(readFileSync(file));
  const imports = {
    env: { emscripten_notify_memory_growth: () => {} },
    wasi_snapshot_preview1: {
      proc_exit: (code: number) => {
        throw new Error(`LAME exited (${code})`);
      },
    },
  };
  const exports = new wasmApi.Instance(module, imports).exports as LameExports;
  exports._initialize();
  const version = cString(exports, exports.version());
  if (version !== WASM_VERSION) throw new Error(`mp3.wasm is ${version}; this encoder speaks ${WASM_VERSION}`);
  instance = exports;
  return exports;
}

const freeOnCollect = new FinalizationRegistry<number>((ref) => instance?.enc_free(ref));

export interface Mp3Stream {
  /** Encodes samples at the stream's rate; returns the frames completed so far (often none). */
  push(pcm: Int16Array): Buffer;
  /** The last frames (LAME's flush, the last one padded); the encoder's state is freed. */
  end(): Buffer;
}

/** A constant-bitrate mono MP3 encoder at `sampleRate` (the output's rate) and `kbps`. */
export function createLameMp3(sampleRate: number, kbps: number): Mp3Stream {
  // LAME would quietly pick the nearest bitrate or rate: refuse instead.
  if (!isMp3Bitrate(sampleRate, kbps)) throw new Error(`no MP3 frames of ${kbps} kb/s at ${sampleRate} Hz`);
  const wasm = lame();
  // PARAMS (packed): channels, input rate, bitrate, VBR quality (float, < 0 for CBR), output rate.
  const params = wasm.malloc(20);
  if (!params) throw new Error('LAME: out of memory');
  let ref: number;
  try {
    const view = new DataView(wasm.memory.buffer, params, 20);
    view.setUint32(0, 1, true);
    view.setUint32(4, sampleRate, true);
    view.setUint32(8, kbps, true);
    view.setFloat32(12, -1, true);
    view.setUint32(16, sampleRate, true);
    ref = wasm.enc_init(params);
  } finally {
    wasm.free(params);
  }
  if (!ref) throw new Error(`LAME refused mono ${sampleRate} Hz at ${kbps} kb/s`);
  const owner = {};
  freeOnCollect.register(owner, ref, owner);
  let ended = false;

  const output = (written: number): Buffer => {
    if (written < 0) throw new Error(`LAME failed (${written})`);
    // A copy: the buffer is LAME's and is overwritten by the next call.
    return Buffer.from(new Uint8Array(wasm.memory.buffer, wasm.enc_get_out_buf(ref), written));
  };

  return {
    push(pcm: Int16Array): Buffer {
      if (ended) throw new Error('MP3 encoder already ended');
      if (pcm.length === 0) return Buffer.alloc(0);
      const channels = wasm.enc_get_pcm(ref, pcm.length);
      if (!channels) throw new Error('LAME: out of memory');
      // enc_get_pcm may grow the memory: views are taken after it.
      const left = new Uint32Array(wasm.memory.buffer, channels, 1)[0]!;
      const samples = new Float32Array(wasm.memory.buffer, left, pcm.length);
      // LAME scales float input by 32767 (lame_encode_buffer_ieee_float): the samples arrive as given.
      for (let i = 0; i < pcm.length; i++) samples[i] = pcm[i]! / 32767;
      return output(wasm.enc_encode(ref, pcm.length));
    },
    end(): Buffer {
      if (ended) return Buffer.alloc(0);
      ended = true;
      try {
        return output(wasm.enc_flush(ref));
      } finally {
        freeOnCollect.unregister(owner);
        wasm.enc_free(ref);
      }
    },
  };
}
