import { afterEach, describe, expect, it } from 'vitest';
import {
  CpuBusyError,
  CpuJobError,
  cpuJobModule,
  createCpuPool,
  type CpuJob,
  type CpuJobFailure,
  type CpuPool,
} from '../src/lib/cpu-pool.js';
import { ParseError } from './helpers/cpu-jobs.js';

const MODULE = cpuJobModule(import.meta.url, './helpers/cpu-jobs');
const job = <I, O, C = never>(kind: string, name: string, extra: Partial<CpuJob<I, O, C>> = {}): CpuJob<I, O, C> => ({
  kind,
  module: MODULE,
  name,
  ...extra,
});
const gated = (kind = 'slow') => job<{ gate: SharedArrayBuffer; label: string }, string, string>(kind, 'gated');

/** A gate a gated job waits on; open() lets every job behind it finish. */
function gate() {
  const buffer = new SharedArrayBuffer(4);
  return {
    buffer,
    open() {
      Atomics.store(new Int32Array(buffer), 0, 1);
      Atomics.notify(new Int32Array(buffer), 0);
    },
  };
}

async function until(check: () => boolean) {
  for (let i = 0; i < 600 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 25));
  expect(check()).toBe(true);
}

let pool: CpuPool | null = null;
afterEach(async () => {
  await pool?.close(0);
  pool = null;
});

describe('the CPU pool', () => {
  it('runs a job on a worker thread and returns its result', async () => {
    pool = createCpuPool({ threads: 1, kinds: { misc: { queue: 4 } } });
    const ran = await pool.run(job<object, { isMainThread: boolean; threadId: number }>('misc', 'where'), {});
    expect(ran.isMainThread).toBe(false);
    expect(ran.threadId).toBeGreaterThan(0);
    expect(await pool.run(job<{ value: unknown }, unknown>('misc', 'echo'), { value: { a: [1, 'two'] } })).toEqual({
      a: [1, 'two'],
    });
  });

  it.runIf(process.platform === 'linux')(
    'runs its threads below the event loop, the event loop unchanged',
    async () => {
      const { niceness } = await import('./helpers/cpu-jobs.js');
      const before = await niceness();
      pool = createCpuPool({ threads: 2, nice: 7, kinds: { misc: { queue: 4 } } });
      const nice = job<object, number>('misc', 'niceness');
      const [first, second] = await Promise.all([pool.run(nice, {}), pool.run(nice, {})]);
      expect([first, second]).toEqual([Math.min(19, before + 7), Math.min(19, before + 7)]);
      expect(await niceness()).toBe(before);
    },
  );

  it('moves transferred input and streams chunks in order', async () => {
    pool = createCpuPool({ threads: 1, kinds: { misc: { queue: 4 } } });
    const bytes = new Uint8Array([1, 2, 3, 250]);
    const total = await pool.run(
      job<{ bytes: Uint8Array }, number>('misc', 'sum'),
      { bytes },
      { transfer: [bytes.buffer] },
    );
    expect(total).toBe(256);
    expect(bytes.byteLength).toBe(0); // moved, not copied
    const seen: number[] = [];
    for await (const chunk of pool.stream(job<{ count: number; size: number }, number, Uint8Array>('misc', 'chunks'), {
      count: 5,
      size: 3,
    })) {
      expect(chunk).toHaveLength(3);
      seen.push(chunk[0]!);
    }
    expect(seen).toEqual([0, 1, 2, 3, 4]);
  });

  it('refuses a job with CpuBusyError when its kind’s queue is full, and counts the refusal', async () => {
    pool = createCpuPool({ threads: 1, kinds: { slow: { queue: 2 }, other: { queue: 1 } } });
    const door = gate();
    const running = pool.run(gated(), { gate: door.buffer, label: 'a' });
    const queued = [1, 2].map((i) => pool!.run(gated(), { gate: door.buffer, label: `q${i}` }));
    await until(() => pool!.stats().slow!.running === 1);
    expect(pool.stats().slow).toEqual({ queued: 2, running: 1, refused: 0 });
    const refused = await pool.run(gated(), { gate: door.buffer, label: 'x' }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(CpuBusyError);
    expect((refused as CpuBusyError).reason).toBe('full');
    expect((refused as CpuBusyError).retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect(pool.stats().slow).toEqual({ queued: 2, running: 1, refused: 1 });
    // Another kind has its own queue: it is accepted (and waits for the thread).
    const other = pool.run(gated('other'), { gate: door.buffer, label: 'o' });
    expect(pool.stats().other).toEqual({ queued: 1, running: 0, refused: 0 });
    door.open();
    expect(await Promise.all([running, ...queued, other])).toEqual(['a', 'q1', 'q2', 'o']);
    expect(pool.stats().slow).toEqual({ queued: 0, running: 0, refused: 1 });
  });

  it('starts urgent jobs ahead of queued ones that are not, first come first served among them', async () => {
    pool = createCpuPool({ threads: 1, kinds: { slow: { queue: 8 } } });
    const door = gate();
    const order: string[] = [];
    const run = (label: string, urgent = false) =>
      pool!.run(gated(), { gate: door.buffer, label }, { urgent }).then((done) => void order.push(done));
    const all = [run('running')];
    await until(() => pool!.stats().slow!.running === 1);
    all.push(run('n1'), run('u1', true), run('n2'), run('u2', true));
    expect(pool.stats().slow!.queued).toBe(4);
    door.open();
    await Promise.all(all);
    expect(order).toEqual(['running', 'u1', 'u2', 'n1', 'n2']);
  });

  it('keeps a thread for other kinds when a kind’s running cap is below the threads', async () => {
    pool = createCpuPool({ threads: 2, kinds: { heavy: { queue: 4, running: 1 }, light: { queue: 4 } } });
    const door = gate();
    const heavy = [1, 2].map((i) => pool!.run(gated('heavy'), { gate: door.buffer, label: `h${i}` }));
    await until(() => pool!.stats().heavy!.running === 1);
    expect(pool.stats().heavy!.queued).toBe(1);
    expect(await pool.run(job<{ value: unknown }, unknown>('light', 'echo'), { value: 'quick' })).toBe('quick');
    door.open();
    expect(await Promise.all(heavy)).toEqual(['h1', 'h2']);
  });

  it('cancels a running job when its signal aborts, and drops a queued one', async () => {
    pool = createCpuPool({ threads: 1, kinds: { slow: { queue: 4 } } });
    const door = gate();
    const first = new AbortController();
    const second = new AbortController();
    const running = pool.run(gated(), { gate: door.buffer, label: 'a' }, { signal: first.signal });
    const queued = pool.run(gated(), { gate: door.buffer, label: 'b' }, { signal: second.signal });
    await until(() => pool!.stats().slow!.running === 1);
    second.abort();
    await expect(queued).rejects.toThrow();
    expect(pool.stats().slow!.queued).toBe(0);
    first.abort();
    await expect(running).rejects.toThrow();
    // The job saw the flag and stopped: the thread is free without opening the gate.
    await until(() => pool!.stats().slow!.running === 0);
    expect(await pool.run(job<{ value: unknown }, unknown>('slow', 'echo'), { value: 1 })).toBe(1);
  });

  it('stops a stream’s job when the reader stops early', async () => {
    pool = createCpuPool({ threads: 1, kinds: { slow: { queue: 4 } } });
    const door = gate();
    for await (const chunk of pool.stream(gated(), { gate: door.buffer, label: 'a' })) {
      expect(chunk).toBe('started a');
      break;
    }
    await until(() => pool!.stats().slow!.running === 0);
  });

  it('revives a job’s error type, or gives CpuJobError with its fields', async () => {
    pool = createCpuPool({ threads: 1, kinds: { misc: { queue: 4 } } });
    const plain = await pool.run(job<{ line: number }, never>('misc', 'fail'), { line: 7 }).catch((e: unknown) => e);
    expect(plain).toBeInstanceOf(CpuJobError);
    expect((plain as CpuJobError).failure).toEqual({
      name: 'ParseError',
      message: 'unexpected token',
      data: { line: 7 },
    });
    const revive = (failure: CpuJobFailure) => new ParseError(failure.message, Number(failure.data.line));
    const revived = await pool
      .run(job<{ line: number }, never>('misc', 'fail', { reviveError: revive }), { line: 9 })
      .catch((e: unknown) => e);
    expect(revived).toBeInstanceOf(ParseError);
    expect((revived as ParseError).line).toBe(9);
  });

  it('replaces a worker that dies, and one that runs past its kind’s time limit', async () => {
    pool = createCpuPool({ threads: 1, kinds: { misc: { queue: 4 }, stuck: { queue: 1, timeoutMs: 500 } } });
    await expect(pool.run(job('misc', 'crash'), {})).rejects.toThrow(/worker stopped/);
    await expect(pool.run(job('stuck', 'spin'), {})).rejects.toThrow(/ran past 500 ms/);
    expect(await pool.run(job<{ value: unknown }, unknown>('misc', 'echo'), { value: 'alive' })).toBe('alive');
  });

  describe('warm-up', () => {
    type Report = { threadId: number; warmed: string[] };
    const report = job<{ gate?: SharedArrayBuffer }, Report>('misc', 'warmedHere');
    const warmUp = (...steps: Array<{ label: string; fail?: boolean }>) => ({
      module: MODULE,
      name: 'warmStep',
      inputs: steps,
    });
    /** What each of the two threads has run of its warm-up, both held at once so each answers for its own thread. */
    async function bothThreads(): Promise<Report[]> {
      const door = gate();
      const reports = [1, 2].map(() => pool!.run(report, { gate: door.buffer }));
      await until(() => pool!.stats().misc!.running === 2);
      door.open();
      return Promise.all(reports);
    }
    async function untilBothWarmed(steps: string[]): Promise<Report[]> {
      for (let i = 0; i < 200; i++) {
        const reports = await bothThreads();
        if (reports.every((r) => r.warmed.length >= steps.length)) return reports;
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      throw new Error('the threads did not warm up');
    }

    it('warms every thread, each step once and in order, only once its kind is used; a new thread too', async () => {
      pool = createCpuPool({ threads: 2, kinds: { speech: { queue: 4 }, misc: { queue: 4 } } });
      pool.setWarmUp('speech', warmUp({ label: 'a' }, { label: 'b' }, { label: 'c' }));
      // Another kind's jobs start no warm-up.
      for (const r of await bothThreads()) expect(r.warmed).toEqual([]);
      expect(await pool.run(job<{ value: unknown }, unknown>('speech', 'echo'), { value: 1 })).toBe(1);
      const warmed = await untilBothWarmed(['a', 'b', 'c']);
      expect(warmed.map((r) => r.warmed)).toEqual([
        ['a', 'b', 'c'],
        ['a', 'b', 'c'],
      ]);
      expect(new Set(warmed.map((r) => r.threadId)).size).toBe(2);
      // Warm-up steps are not the kind's jobs.
      expect(pool.stats().speech).toEqual({ queued: 0, running: 0, refused: 0 });
      // A thread that dies is replaced by one that warms up in its turn.
      await expect(pool.run(job('misc', 'crash'), {})).rejects.toThrow(/worker stopped/);
      const after = await untilBothWarmed(['a', 'b', 'c']);
      expect(after.map((r) => r.warmed)).toEqual([
        ['a', 'b', 'c'],
        ['a', 'b', 'c'],
      ]);
      expect(after.some((r) => !warmed.some((w) => w.threadId === r.threadId))).toBe(true);
    });

    it('runs no warm-up when the pool is told not to', async () => {
      pool = createCpuPool({ threads: 1, warmUp: false, kinds: { speech: { queue: 4 }, misc: { queue: 4 } } });
      pool.setWarmUp('speech', warmUp({ label: 'a' }));
      expect(await pool.run(job<{ value: unknown }, unknown>('speech', 'echo'), { value: 1 })).toBe(1);
      // A warm-up step would have started the moment the thread was idle, ahead of this job.
      expect((await pool.run(report, {})).warmed).toEqual([]);
    });

    it('ends the warm-up of a kind at a step that fails', async () => {
      pool = createCpuPool({ threads: 1, kinds: { speech: { queue: 4 }, misc: { queue: 4 } } });
      pool.setWarmUp('speech', warmUp({ label: 'a' }, { label: 'x', fail: true }, { label: 'c' }));
      expect(await pool.run(job<{ value: unknown }, unknown>('speech', 'echo'), { value: 1 })).toBe(1);
      let seen: string[] = [];
      for (let i = 0; i < 200 && seen.length < 2; i++) seen = (await pool.run(report, {})).warmed;
      expect(seen).toEqual(['a', 'x']);
      // Had the warm-up gone on, its next step would have started the moment the thread was idle,
      // ahead of this job.
      expect((await pool.run(report, {})).warmed).toEqual(['a', 'x']);
    });
  });

  it('refuses new jobs and the queued ones while closing', async () => {
    pool = createCpuPool({ threads: 1, kinds: { slow: { queue: 4 } } });
    const door = gate();
    const running = pool.run(gated(), { gate: door.buffer, label: 'a' });
    const queued = pool.run(gated(), { gate: door.buffer, label: 'b' }).catch((e: unknown) => e);
    await until(() => pool!.stats().slow!.running === 1);
    const closed = pool.close(30_000);
    expect(await queued).toMatchObject({ name: 'CpuBusyError', reason: 'closing' });
    await expect(pool.run(gated(), { gate: door.buffer, label: 'c' })).rejects.toMatchObject({ reason: 'closing' });
    door.open();
    expect(await running).toBe('a'); // a running job finishes within the grace
    await closed;
  });
});
