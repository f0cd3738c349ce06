/**
 * Loaded into a service with `--import` (bench/chat/many-streams.ts `--alloc-profile`): SIGUSR2
 * starts V8's sampling heap profiler, objects collected by either collector included (so it
 * counts what was allocated, not what survived); the next SIGUSR2 writes the profile to
 * HEAP_SAMPLER_OUT (a `.heapprofile`, opened by Chrome DevTools' Memory tab) and stops.
 * Plain JavaScript: the built service runs without tsx.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import process from 'node:process';

const out = process.env.HEAP_SAMPLER_OUT;
if (out) {
  const session = new Session();
  session.connect();
  let sampling = false;
  process.on('SIGUSR2', () => {
    sampling = !sampling;
    const step = sampling
      ? session.post('HeapProfiler.enable').then(() =>
          session.post('HeapProfiler.startSampling', {
            samplingInterval: Number(process.env.HEAP_SAMPLER_INTERVAL ?? 4096),
            includeObjectsCollectedByMajorGC: true,
            includeObjectsCollectedByMinorGC: true,
          }),
        )
      : session.post('HeapProfiler.stopSampling').then(({ profile }) => writeFileSync(out, JSON.stringify(profile)));
    step.catch((error) => process.stderr.write(`heap sampler: ${error.message}\n`));
  });
}
