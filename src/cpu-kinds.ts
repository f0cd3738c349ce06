/**
 * The kinds of job the service's CPU pool (src/lib/cpu-pool.ts) takes, each with its queue and
 * time limit (CPU_POOL_* settings, src/config.ts): `speech` (synthesis, encoding, resampling) and
 * `documents` (parsing, OCR and chunking of knowledge documents, crawled pages' links).
 */
import type { Config } from './config.js';
import type { CpuPoolOptions } from './lib/cpu-pool.js';
import type { Metrics } from './lib/metrics.js';
import { DOCUMENTS_KIND } from './modules/knowledge/index.js';

/** `speechKind`: the speech adapter's kind (the container names it; adapters are the container's to import). */
export function cpuPoolOptions(config: Config['cpuPool'], metrics: Metrics, speechKind: string): CpuPoolOptions {
  return {
    threads: config.threads,
    nice: config.nice,
    maxHeapMb: config.maxHeapMb,
    warmUp: config.warmUp,
    observer: metrics.cpuObserver,
    kinds: {
      [speechKind]: { queue: config.speech.queue, timeoutMs: config.speech.timeoutMs },
      [DOCUMENTS_KIND]: { queue: config.documents.queue, timeoutMs: config.documents.timeoutMs },
    },
  };
}
