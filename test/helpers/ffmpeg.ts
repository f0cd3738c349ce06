/**
 * Debian's ffmpeg as the independent decoder of our audio formats (.ci/run installs it when
 * missing; tests skip, saying so, where it is absent), and the comparisons a real codec passes:
 * the same samples for lossless formats, SNR for G.711, correlation at lag 0 for MP3 and Opus,
 * the RMS envelope for two syntheses of the same text.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

export const FFMPEG = '/usr/bin/ffmpeg';
export const FFPROBE = '/usr/bin/ffprobe';
export const hasFfmpeg = existsSync(FFMPEG) && existsSync(FFPROBE);
export const NO_FFMPEG = `${FFMPEG} is missing (apt-get install -y ffmpeg): the decoding tests are skipped`;

/**
 * Runs ffmpeg or ffprobe on `input` written to a file of its own: from a pipe, ffmpeg's MP3
 * reader does not drop the padding an info frame names (it does from a file, as players do).
 */
async function run(command: string, args: (file: string) => string[], input: Buffer): Promise<Buffer> {
  const dir = await mkdtemp(path.join(tmpdir(), 'sb-ffmpeg-'));
  const file = path.join(dir, 'input');
  try {
    await writeFile(file, input);
    return await exec(command, args(file));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function exec(command: string, args: string[]): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0
        ? resolve(Buffer.concat(out))
        : reject(new Error(`${command} exited ${code}: ${Buffer.concat(err).toString().slice(0, 500)}`)),
    );
  });
}

/** The input options ffmpeg needs for headerless formats (raw PCM, G.711). */
export function rawInput(format: string): string[] {
  const rate = format.split('_')[1]!;
  if (format.startsWith('pcm_')) return ['-f', 's16le', '-ar', rate, '-ac', '1'];
  if (format.startsWith('ulaw_')) return ['-f', 'mulaw', '-ar', rate, '-ac', '1'];
  if (format.startsWith('alaw_')) return ['-f', 'alaw', '-ar', rate, '-ac', '1'];
  return [];
}

/** `bytes` decoded by ffmpeg to 16-bit mono PCM at its own rate (no resampling). */
export async function ffmpegDecode(bytes: Buffer, input: string[] = []): Promise<Int16Array> {
  const out = await run(
    FFMPEG,
    (file) => ['-v', 'error', ...input, '-i', file, '-f', 's16le', '-ac', '1', 'pipe:1'],
    bytes,
  );
  return new Int16Array(out.buffer, out.byteOffset, out.length / 2);
}

export interface ProbedStream {
  codec_name: string;
  sample_rate: string;
  channels: number;
  bit_rate?: string;
}

/** ffprobe's view of the first stream. */
export async function ffprobe(bytes: Buffer, input: string[] = []): Promise<ProbedStream> {
  const entries = 'stream=codec_name,sample_rate,channels,bit_rate';
  const args = (file: string) => ['-v', 'error', ...input, '-show_entries', entries, '-of', 'json', file];
  const out = await run(FFPROBE, args, bytes);
  return (JSON.parse(out.toString()) as { streams: ProbedStream[] }).streams[0]!;
}

/** Normalised correlation of `a` and `b` at lag 0 over the shorter length. */
export function correlation(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let ab = 0;
  let aa = 0;
  let bb = 0;
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    ab += a[i]! * b[i]!;
    aa += a[i]! * a[i]!;
    bb += b[i]! * b[i]!;
  }
  return ab / Math.sqrt(aa * bb || 1);
}

/** Signal-to-noise ratio in dB of `decoded` against `reference`, at lag 0. */
export function snrDb(reference: ArrayLike<number>, decoded: ArrayLike<number>): number {
  let signal = 0;
  let noise = 0;
  for (let i = 0; i < reference.length; i++) {
    signal += reference[i]! ** 2;
    noise += (reference[i]! - (decoded[i] ?? 0)) ** 2;
  }
  return 10 * Math.log10(signal / (noise || 1e-9));
}

/** RMS per 10 ms window: what two syntheses of the same text share even when their waveforms differ. */
export function envelope(samples: ArrayLike<number>, sampleRate: number): number[] {
  const window = Math.round(sampleRate / 100);
  const out: number[] = [];
  for (let at = 0; at + window <= samples.length; at += window) {
    let sum = 0;
    for (let i = at; i < at + window; i++) sum += samples[i]! ** 2;
    out.push(Math.sqrt(sum / window));
  }
  return out;
}

/**
 * Files played one after another, decoded by ffmpeg in one run (its `concat` demuxer, each file
 * opened as a file of its own): what a gapless player does with a turn's audio chunks.
 */
export async function ffmpegDecodeSequence(files: Buffer[]): Promise<Int16Array> {
  const dir = await mkdtemp(path.join(tmpdir(), 'sb-ffmpeg-'));
  try {
    const names = await Promise.all(
      files.map(async (bytes, i) => {
        const name = path.join(dir, `part-${i}.mp3`);
        await writeFile(name, bytes);
        return name;
      }),
    );
    const list = path.join(dir, 'list.txt');
    await writeFile(list, names.map((name) => `file '${name}'\n`).join(''));
    const out = await exec(FFMPEG, [
      '-v',
      'error',
      '-f',
      'concat',
      '-safe',
      '0',
      '-i',
      list,
      '-f',
      's16le',
      '-ac',
      '1',
      'pipe:1',
    ]);
    return new Int16Array(out.buffer, out.byteOffset, out.length / 2);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
