/**
 * A process running every worker polls each task queue from several loops at once; waiting for
 * their next poll must not pile listeners on one AbortSignal (Node warns past ten: a false
 * "possible memory leak" at every start), and stopping wakes them all.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './helpers/app.js';

describe('job workers at start', () => {
  let test: TestApp | undefined;
  const warnings: Error[] = [];
  const onWarning = (warning: Error) => warnings.push(warning);
  afterEach(async () => {
    process.off('warning', onWarning);
    await test?.close();
  });

  it('start every task loop without a MaxListenersExceededWarning, and stop', async () => {
    process.on('warning', onWarning);
    test = await createTestApp({ RUN_WORKERS: 'true' });
    expect(test.container.queue.workerId()).not.toBeNull();
    // Every loop has polled its empty queue once and is waiting for the next poll.
    await new Promise((resolve) => setTimeout(resolve, 2500));
    await test.close();
    test = undefined;
    expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning').map((w) => w.message)).toEqual([]);
  });
});
