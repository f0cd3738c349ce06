/**
 * The service's Prometheus instruments, one registry per container (tests build several in one
 * process). HTTP requests and rate-limit refusals are counted in src/http/metrics.ts, jobs in
 * src/jobs/queue.ts, chat turns and tool calls in the chat module, model calls by the wrapper
 * below, the CPU pool's refusals and jobs by its observer; pool and queue gauges are read when
 * /metrics is scraped.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { LlmCallObserver } from '../ports/llm.js';
import type { CpuKindStats, CpuPoolObserver } from './cpu-pool.js';

/** The counts a pg Pool exposes. */
export interface PoolStats {
  totalCount: number;
  idleCount: number;
  waitingCount: number;
}

export interface QueueDepth {
  queue: string;
  /** pg-boss state of the jobs not finished: created, retry or active. */
  state: string;
  count: number;
}

const NON_COUNTER_TOTALS = [
  'nodejs_active_handles_total',
  'nodejs_active_requests_total',
  'nodejs_active_resources_total',
];

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

export function createMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'switchboard_' });
  // prom-client also exposes the sums of three per-type gauges under names ending in `_total`,
  // which Prometheus reserves for counters (`promtool check metrics` refuses them); the per-type
  // gauges (`…_active_handles{type}` and the like) stay, and sum to the same figure.
  for (const name of NON_COUNTER_TOTALS) registry.removeSingleMetric(`switchboard_${name}`);
  const registers = [registry];
  const pools = new Map<string, PoolStats>();
  let queueDepth: (() => Promise<QueueDepth[]>) | null = null;
  let cpuPool: (() => Record<string, CpuKindStats>) | null = null;
  let searchIndexes: (() => { companyId: string; chunks: number; bytes: number }[]) | null = null;

  new Gauge({
    name: 'switchboard_search_index_bytes',
    help: 'Memory of the in-process BM25 index of each company whose full-text search it answers (bounded by SEARCH_INDEX_BUDGET_MB)',
    labelNames: ['company'] as const,
    registers,
    collect() {
      this.reset();
      for (const held of searchIndexes?.() ?? []) this.set({ company: held.companyId }, held.bytes);
    },
  });
  new Gauge({
    name: 'switchboard_search_index_chunks',
    help: 'Chunks held by the in-process BM25 index of each company',
    labelNames: ['company'] as const,
    registers,
    collect() {
      this.reset();
      for (const held of searchIndexes?.() ?? []) this.set({ company: held.companyId }, held.chunks);
    },
  });

  new Gauge({
    name: 'switchboard_db_pool_connections',
    help: 'Connections of a database pool: total (open), idle, and waiting (requests queued for a connection)',
    labelNames: ['pool', 'state'] as const,
    registers,
    collect() {
      this.reset();
      for (const [pool, stats] of pools) {
        this.set({ pool, state: 'total' }, stats.totalCount);
        this.set({ pool, state: 'idle' }, stats.idleCount);
        this.set({ pool, state: 'waiting' }, stats.waitingCount);
      }
    },
  });
  new Gauge({
    name: 'switchboard_job_queue_depth',
    help: 'Unfinished jobs per queue and state (created, retry, active), read from the job tables on scrape',
    labelNames: ['queue', 'state'] as const,
    registers,
    async collect() {
      if (!queueDepth) return;
      // A scrape still answers when the database does not: the gauge keeps its last values.
      const rows = await queueDepth().catch(() => null);
      if (!rows) return;
      this.reset();
      for (const row of rows) this.set({ queue: row.queue, state: row.state }, row.count);
    },
  });

  new Gauge({
    name: 'switchboard_cpu_pool_jobs',
    help: 'Jobs of the CPU pool (speech synthesis and encoding, document extraction) by kind and state: queued (waiting for a thread) or running',
    labelNames: ['kind', 'state'] as const,
    registers,
    collect() {
      if (!cpuPool) return;
      for (const [kind, stats] of Object.entries(cpuPool())) {
        this.set({ kind, state: 'queued' }, stats.queued);
        this.set({ kind, state: 'running' }, stats.running);
      }
    },
  });
  const cpuRefusals = new Counter({
    name: 'switchboard_cpu_pool_refusals_total',
    help: "Jobs the CPU pool refused (answered 503 with Retry-After), by kind and reason: full (the kind's queue) or closing",
    labelNames: ['kind', 'reason'] as const,
    registers,
  });
  const cpuJobDuration = new Histogram({
    name: 'switchboard_cpu_pool_job_seconds',
    help: 'Time a CPU pool job held its thread, by kind and outcome (ok, error, aborted, timeout)',
    labelNames: ['kind', 'outcome'] as const,
    buckets: LATENCY_BUCKETS,
    registers,
  });
  const cpuWarmUps = new Counter({
    name: 'switchboard_cpu_pool_warm_up_steps_total',
    help: "Warm-up steps the CPU pool ran on idle threads (a kind's code brought up to speed off the request path), by kind and outcome (ok, error, timeout)",
    labelNames: ['kind', 'outcome'] as const,
    registers,
  });
  const cpuObserver: CpuPoolObserver = {
    refused: (kind, reason) => cpuRefusals.inc({ kind, reason }),
    finished: (kind, outcome, seconds) => cpuJobDuration.observe({ kind, outcome }, seconds),
    warmedUp: (kind, outcome) => cpuWarmUps.inc({ kind, outcome }),
  };

  return {
    registry,
    /** Give to createCpuPool: counts refusals and times jobs. */
    cpuObserver,
    /** Reports the CPU pool's queues on every scrape. */
    watchCpuPool(stats: () => Record<string, CpuKindStats>) {
      cpuPool = stats;
    },
    /** Reports each company's in-process search index on every scrape. */
    watchSearchIndexes(read: () => { companyId: string; chunks: number; bytes: number }[]) {
      searchIndexes = read;
    },
    httpDuration: new Histogram({
      name: 'switchboard_http_request_duration_seconds',
      help: 'HTTP request latency by method, route and status',
      labelNames: ['method', 'route', 'status_code'] as const,
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    }),
    rateLimitRejections: new Counter({
      name: 'switchboard_rate_limit_rejections_total',
      help: 'Requests refused with 429, by the rate-limit window that was exhausted',
      labelNames: ['limit'] as const,
      registers,
    }),
    jobDuration: new Histogram({
      name: 'switchboard_job_duration_seconds',
      help: 'Time a worker spent on one job, by queue and outcome (completed or failed)',
      labelNames: ['queue', 'outcome'] as const,
      buckets: LATENCY_BUCKETS,
      registers,
    }),
    chatTurns: new Counter({
      name: 'switchboard_chat_turns_total',
      help: 'Chat turns answered, by finish (stop, aborted, error) and model provider (builtin: the knowledge-base responder)',
      labelNames: ['finish', 'provider'] as const,
      registers,
    }),
    toolCalls: new Counter({
      name: 'switchboard_tool_calls_total',
      help: 'Tools a chat turn used, by tool and outcome (knowledge_base: the knowledge search that grounded the answer)',
      labelNames: ['tool', 'outcome'] as const,
      registers,
    }),
    modelLatency: new Histogram({
      name: 'switchboard_model_request_duration_seconds',
      help: 'Language model calls from request to the last token, by model and outcome (ok, error, aborted)',
      labelNames: ['model', 'outcome'] as const,
      buckets: LATENCY_BUCKETS,
      registers,
    }),
    modelFirstToken: new Histogram({
      name: 'switchboard_model_first_token_seconds',
      help: 'Language model calls from request to the first text, by model',
      labelNames: ['model'] as const,
      buckets: LATENCY_BUCKETS,
      registers,
    }),
    modelTokens: new Counter({
      name: 'switchboard_model_tokens_total',
      help: 'Tokens the language model providers reported, by model and direction (input, output)',
      labelNames: ['model', 'direction'] as const,
      registers,
    }),
    /** Reports a pg Pool's connections on every scrape. */
    watchPool(name: string, pool: PoolStats) {
      pools.set(name, pool);
    },
    /** Reads the job queues' depth on every scrape. */
    watchQueues(read: () => Promise<QueueDepth[]>) {
      queueDepth = read;
    },
  };
}

export type Metrics = ReturnType<typeof createMetrics>;

/** The observer of model calls (the LLM client's) that times them and counts their reported tokens. */
export function modelCallMetrics(
  metrics: Pick<Metrics, 'modelLatency' | 'modelFirstToken' | 'modelTokens'>,
): LlmCallObserver {
  return {
    firstPart: (model, seconds) => metrics.modelFirstToken.observe({ model }, seconds),
    usage(model, usage) {
      if (usage.inputTokens) metrics.modelTokens.inc({ model, direction: 'input' }, usage.inputTokens);
      if (usage.outputTokens) metrics.modelTokens.inc({ model, direction: 'output' }, usage.outputTokens);
    },
    ended: (model, outcome, seconds) => metrics.modelLatency.observe({ model, outcome }, seconds),
  };
}
