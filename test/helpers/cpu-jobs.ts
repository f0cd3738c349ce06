/**
 * Jobs for the CPU pool's tests, run in its worker threads. A gate is a shared word the test
 * opens (Atomics.notify), so a job holds its thread exactly as long as a test needs, without timing.
 */
import type { CpuJobContext } from '../../src/lib/cpu-pool.js';

export function echo(input: { value: unknown }) {
  return input.value;
}

/** Holds the thread until the gate opens (or the job is cancelled), then answers its label. */
export function gated(input: { gate: SharedArrayBuffer; label: string }, context: CpuJobContext<string>) {
  const gate = new Int32Array(input.gate);
  context.emit(`started ${input.label}`);
  while (Atomics.load(gate, 0) === 0) {
    Atomics.wait(gate, 0, 0, 50);
    context.throwIfCancelled();
  }
  return input.label;
}

/** Emits `count` chunks, then the total of their lengths; the bytes are moved, not copied. */
export function chunks(input: { count: number; size: number }, context: CpuJobContext<Uint8Array>) {
  for (let i = 0; i < input.count; i++) {
    const bytes = new Uint8Array(input.size).fill(i);
    context.emit(bytes, [bytes.buffer]);
  }
  return input.count * input.size;
}

export function sum(input: { bytes: Uint8Array }) {
  return input.bytes.reduce((total, byte) => total + byte, 0);
}

export class ParseError extends Error {
  override readonly name = 'ParseError';
  constructor(
    message: string,
    readonly line: number,
  ) {
    super(message);
  }
}

export function fail(input: { line: number }) {
  throw new ParseError('unexpected token', input.line);
}

/** Takes the thread down with it. */
export function crash() {
  process.exit(3);
}

/** Never returns by itself. */
export function spin(): never {
  for (;;) {
    // busy
  }
}

/** Where the job ran: a worker thread, not the caller's. */
export async function where() {
  const { isMainThread, threadId } = await import('node:worker_threads');
  return { isMainThread, threadId };
}

/** The niceness of the thread the job runs on, read from the kernel (Linux). */
export async function niceness() {
  const { readFileSync } = await import('node:fs');
  const stat = readFileSync('/proc/thread-self/stat', 'utf8');
  // Fields after the command's closing parenthesis: state is field 3, nice field 19.
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
}

/** This thread's warm-up steps so far (warmStep). */
const warmed: string[] = [];

/** A warm-up step: records its label on this thread; `fail` records it, then throws. */
export function warmStep(input: { label: string; fail?: boolean }) {
  warmed.push(input.label);
  if (input.fail) throw new Error(`step ${input.label} failed`);
}

/** Holds the thread until the gate opens, then tells which thread it is and the warm-up steps it ran. */
export async function warmedHere(input: { gate?: SharedArrayBuffer }) {
  const gate = input.gate ? new Int32Array(input.gate) : null;
  while (gate && Atomics.load(gate, 0) === 0) Atomics.wait(gate, 0, 0, 50);
  const { threadId } = await import('node:worker_threads');
  return { threadId, warmed: [...warmed] };
}
