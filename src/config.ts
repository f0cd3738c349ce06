/**
 * The only reader of process.env. Every setting is parsed, validated and frozen here;
 * a bad value throws a ConfigError naming the variable, and the entry point exits with it.
 */
import path from 'node:path';
import { defaultThreads } from './lib/cpu-pool.js';
import { bool, ConfigError, identifier, int, modelsDir, oneOf, str, url, type Env } from './config.parse.js';
import { knowledgeConfig, type KnowledgeConfig } from './config.knowledge.js';
import { widgetConfig, type WidgetConfig } from './config.widget.js';
import { mcpConfig, type McpConfig } from './config.mcp.js';
import { llmHttpConfig, type LlmHttpConfig } from './config.llm.js';
import { integrationsConfig, webhooksConfig, type IntegrationsConfig, type WebhooksConfig } from './config.outbound.js';

export type { IntegrationsConfig, WebhooksConfig } from './config.outbound.js';
export type { KnowledgeConfig } from './config.knowledge.js';
export type { LlmHttpConfig } from './config.llm.js';
export { DEFAULT_RETRY_SCHEDULE_MS } from './config.outbound.js';

export { ConfigError };

function secret(env: Env, name: string, prefix: string): string | undefined {
  const raw = str(env, name);
  if (raw === undefined) return undefined;
  if (raw.length < 20) throw new ConfigError(name, 'must be at least 20 characters long');
  if (!raw.startsWith(prefix)) throw new ConfigError(name, `must start with "${prefix}"`);
  return raw;
}

/** METRICS_TOKEN: at least 16 characters a bearer token may carry (RFC 6750 token68). */
function metricsToken(env: Env): string | undefined {
  const raw = str(env, 'METRICS_TOKEN');
  if (raw === undefined) return undefined;
  if (raw.length < 16) throw new ConfigError('METRICS_TOKEN', 'must be at least 16 characters long');
  if (!/^[A-Za-z0-9\-._~+/]+=*$/.test(raw)) {
    throw new ConfigError('METRICS_TOKEN', 'must contain only letters, digits and - . _ ~ + / (then =)');
  }
  return raw;
}

/** How worker processes tell each other's death: a killed one at once, a vanished host by its heartbeat. */
function workerTimings(env: Env): Config['workerTimings'] {
  const heartbeatSeconds = int(env, 'WORKER_HEARTBEAT_SECONDS', 5, 1, 300);
  const deadAfterSeconds = int(env, 'WORKER_DEAD_AFTER_SECONDS', 20, 2, 3600);
  if (deadAfterSeconds <= heartbeatSeconds) {
    throw new ConfigError(
      'WORKER_DEAD_AFTER_SECONDS',
      `must be longer than WORKER_HEARTBEAT_SECONDS (${heartbeatSeconds})`,
    );
  }
  return { heartbeatSeconds, deadAfterSeconds, sweepSeconds: int(env, 'WORKER_SWEEP_SECONDS', 10, 1, 3600) };
}

/** One LLM provider of LLM_PROVIDERS; agents name its models as `<name>:<model>`. */
export interface LlmProviderConfig {
  name: string;
  type: 'openai' | 'anthropic' | 'openai-compatible';
  apiKey: string | undefined;
  baseUrl: string | undefined;
  /** Models agents may use; empty means any model name of this provider. */
  models: string[];
}

export interface ChatConfig {
  llmProviders: LlmProviderConfig[];
  /** LLM_HTTP2, LLM_HTTP2_MAX_STREAMS, LLM_CA_FILE: the connections of provider calls. */
  llmHttp: LlmHttpConfig;
  /** Milliseconds between SSE heartbeat comments. */
  heartbeatMs: number;
  /** Stored messages of a conversation passed to the model as history. */
  historyLimit: number;
  /** Knowledge chunks retrieved per question. */
  retrievalTopK: number;
  /** Upper bound of one model call. */
  llmTimeoutMs: number;
  maxAudioBytes: number;
  /**
   * How long a streamed turn's events are kept after its end for reconnects (`Last-Event-ID`),
   * and how long a turn whose client left keeps running waiting for one before it is cancelled.
   */
  streamResumeMs: number;
  /** The `retry:` field of chat streams: the reconnection delay clients are asked to use. */
  streamRetryMs: number;
  /** CHAT_MAX_TOOL_STEPS: model steps of one turn that may call tools (the step after them answers). */
  maxToolSteps: number;
  /**
   * CHAT_TURN_SWEEP_MS: how often a process beats its turn heartbeat and (with workers) records
   * the turns of processes that died mid-turn as failed (dead after three missed beats).
   */
  turnSweepMs: number;
}

const LLM_PROVIDER_TYPES = ['openai', 'anthropic', 'openai-compatible'] as const;

/** LLM_PROVIDERS: a JSON array of `{ name, type, api_key?, base_url?, models? }`. */
function llmProviders(env: Env): LlmProviderConfig[] {
  const raw = str(env, 'LLM_PROVIDERS');
  if (raw === undefined) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new ConfigError('LLM_PROVIDERS', 'must be a JSON array of {name, type, api_key, base_url, models}');
  }
  if (!Array.isArray(parsed)) throw new ConfigError('LLM_PROVIDERS', 'must be a JSON array');
  const names = new Set<string>();
  return parsed.map((entry: unknown, index) => {
    const item = (entry ?? {}) as Record<string, unknown>;
    const where = `entry ${index}`;
    const name = item.name;
    if (typeof name !== 'string' || !/^[a-z0-9][a-z0-9_-]*$/.test(name) || name === 'builtin') {
      throw new ConfigError('LLM_PROVIDERS', `${where}: name must be a lowercase word other than "builtin"`);
    }
    if (names.has(name)) throw new ConfigError('LLM_PROVIDERS', `${where}: duplicate name "${name}"`);
    names.add(name);
    const type = item.type ?? name;
    if (!(LLM_PROVIDER_TYPES as readonly unknown[]).includes(type)) {
      throw new ConfigError('LLM_PROVIDERS', `${where}: type must be one of ${LLM_PROVIDER_TYPES.join(', ')}`);
    }
    const baseUrl = item.base_url;
    if (
      baseUrl !== undefined &&
      (typeof baseUrl !== 'string' || !/^https?:\/\/[^?#]+$/.test(baseUrl) || !URL.canParse(baseUrl))
    ) {
      throw new ConfigError('LLM_PROVIDERS', `${where}: base_url must be an http(s) URL without a query or fragment`);
    }
    if (type === 'openai-compatible' && baseUrl === undefined) {
      throw new ConfigError('LLM_PROVIDERS', `${where}: an openai-compatible provider needs base_url`);
    }
    const apiKey = item.api_key;
    if (apiKey !== undefined && typeof apiKey !== 'string')
      throw new ConfigError('LLM_PROVIDERS', `${where}: api_key must be a string`);
    const models = item.models ?? [];
    if (!Array.isArray(models) || models.some((model) => typeof model !== 'string' || model === '')) {
      throw new ConfigError('LLM_PROVIDERS', `${where}: models must be an array of model names`);
    }
    return { name, type: type as LlmProviderConfig['type'], apiKey, baseUrl, models: models as string[] };
  });
}

/** Speech to text: the `audio` of a chat turn (DESIGN §9). */
export interface SpeechConfig {
  /**
   * STT_PROVIDER: `elevenlabs`, `openai-compatible` (OpenAI's transcriptions protocol, spoken by
   * Whisper servers), `local` (a transformers.js Whisper model) or `none`. Unset: elevenlabs with
   * ELEVENLABS_API_KEY, else openai-compatible with STT_URL, else local when its model is present.
   */
  provider: 'elevenlabs' | 'openai-compatible' | 'local' | 'none';
  /** False when the provider was not named: `local` then serves only if its model is on disk. */
  explicit: boolean;
  elevenLabs: { apiKey: string | undefined; baseUrl: string; model: string };
  openAi: { url: string | undefined; apiKey: string | undefined; model: string };
  local: { model: string; modelsDir: string; allowDownload: boolean };
  timeoutMs: number;
}

const STT_PROVIDERS = ['elevenlabs', 'openai-compatible', 'local', 'none'] as const;

function speechConfig(env: Env): SpeechConfig {
  const elevenLabsKey = str(env, 'ELEVENLABS_API_KEY');
  const sttUrl = url(env, 'STT_URL', ['http:', 'https:']);
  const implicit = elevenLabsKey ? 'elevenlabs' : sttUrl ? 'openai-compatible' : 'local';
  const provider = oneOf(env, 'STT_PROVIDER', STT_PROVIDERS, implicit);
  if (provider === 'elevenlabs' && !elevenLabsKey)
    throw new ConfigError('ELEVENLABS_API_KEY', 'is required when STT_PROVIDER is elevenlabs');
  if (provider === 'openai-compatible' && !sttUrl)
    throw new ConfigError('STT_URL', 'is required when STT_PROVIDER is openai-compatible');
  return {
    provider,
    explicit: str(env, 'STT_PROVIDER') !== undefined,
    elevenLabs: {
      apiKey: elevenLabsKey,
      baseUrl: url(env, 'ELEVENLABS_BASE_URL', ['http:', 'https:']) ?? 'https://api.elevenlabs.io',
      model: str(env, 'ELEVENLABS_STT_MODEL') ?? 'scribe_v2',
    },
    openAi: { url: sttUrl, apiKey: str(env, 'STT_API_KEY'), model: str(env, 'STT_MODEL') ?? 'whisper-1' },
    local: {
      model: str(env, 'STT_LOCAL_MODEL') ?? 'onnx-community/whisper-base',
      modelsDir: modelsDir(env),
      allowDownload: bool(env, 'STT_ALLOW_DOWNLOAD', str(env, 'NODE_ENV') !== 'test'),
    },
    timeoutMs: int(env, 'STT_TIMEOUT_MS', 60_000, 100, 3_600_000),
  };
}

/** Text to speech (DESIGN §9): ElevenLabs with its key, else TTS_URL (OpenAI speech protocol), else
 * offline espeak-ng if installed. TTS_TIMEOUT_MS: between two reads; TTS_MAX_TEXT_CHARS: per request. */
export interface TtsConfig {
  elevenLabs: { apiKey: string | undefined; baseUrl: string; model: string };
  openAi: { url: string | undefined; apiKey: string | undefined; model: string };
  timeoutMs: number;
  maxTextChars: number;
  /** Finished syntheses of a pure engine kept for repeats: SPEECH_CACHE_BYTES in all (0: off), SPEECH_CACHE_COMPANY_BYTES per company. */
  cache: { maxBytes: number; companyBytes: number };
}

const ttsConfig = (env: Env): TtsConfig => ({
  elevenLabs: {
    apiKey: str(env, 'ELEVENLABS_API_KEY'),
    baseUrl: url(env, 'ELEVENLABS_BASE_URL', ['http:', 'https:']) ?? 'https://api.elevenlabs.io',
    model: str(env, 'ELEVENLABS_TTS_MODEL') ?? 'eleven_turbo_v2_5',
  },
  openAi: {
    url: url(env, 'TTS_URL', ['http:', 'https:']),
    apiKey: str(env, 'TTS_API_KEY'),
    model: str(env, 'TTS_MODEL') ?? 'tts-1',
  },
  timeoutMs: int(env, 'TTS_TIMEOUT_MS', 30_000, 100, 600_000),
  maxTextChars: int(env, 'TTS_MAX_TEXT_CHARS', 5000, 1, 100_000),
  cache: {
    maxBytes: int(env, 'SPEECH_CACHE_BYTES', 64 * 1024 * 1024, 0, 4 * 1024 * 1024 * 1024),
    companyBytes: int(env, 'SPEECH_CACHE_COMPANY_BYTES', 8 * 1024 * 1024, 1024, 1024 * 1024 * 1024),
  },
});

/**
 * The CPU pool (src/lib/cpu-pool.ts): CPU_POOL_THREADS worker threads at niceness CPU_POOL_NICE
 * (default 10: below the event loop, Linux only; the default threads are then one per core, 1–4,
 * else the cores less one), and per kind of job the queue that may wait (one more is refused with 503 and
 * Retry-After) and the time limit of one job. `speech`: synthesis, encoding, resampling;
 * `documents`: parsing, OCR and chunking of knowledge documents (an ingestion job that finds the
 * queue full hands its task back for later). CPU_POOL_MAX_HEAP_MB caps each thread's heap.
 */
export interface CpuPoolConfig {
  threads: number;
  nice: number;
  maxHeapMb: number;
  /** Each thread warms up the engines of the kinds in use while idle (CpuPool.setWarmUp). */
  warmUp: boolean;
  speech: { queue: number; timeoutMs: number };
  documents: { queue: number; timeoutMs: number };
}

const cpuPoolConfig = (env: Env): CpuPoolConfig => {
  const nice = int(env, 'CPU_POOL_NICE', 10, 0, 19);
  return {
    threads: int(env, 'CPU_POOL_THREADS', defaultThreads(nice), 1, 64),
    nice,
    maxHeapMb: int(env, 'CPU_POOL_MAX_HEAP_MB', 1024, 64, 65_536),
    warmUp: bool(env, 'CPU_POOL_WARM_UP', true),
    speech: {
      queue: int(env, 'CPU_POOL_SPEECH_QUEUE', 16, 0, 10_000),
      timeoutMs: int(env, 'CPU_POOL_SPEECH_TIMEOUT_MS', 120_000, 1000, 3_600_000),
    },
    documents: {
      queue: int(env, 'CPU_POOL_DOCUMENTS_QUEUE', 16, 0, 10_000),
      timeoutMs: int(env, 'CPU_POOL_DOCUMENTS_TIMEOUT_MS', 15 * 60_000, 1000, 3_600_000),
    },
  };
};

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export interface RateLimitConfig {
  enabled: boolean;
  /** Support queries and team notifications, per API key. */
  insightsPerHour: number;
  insightsPerMinute: number;
  /** Public family, per API key. */
  publicPerMinute: number;
  /** Chat family, per chat token. */
  chatConversationsPerMinute: number;
  chatMessagesPerMinute: number;
  chatStreamsPerMinute: number;
}

/** People signing in to the console with e-mail and password. */
export interface SignInConfig {
  /** SESSION_TTL_HOURS: a session ends this long after sign-in, used or not. */
  sessionTtlHours: number;
  /** SESSION_IDLE_MINUTES: a session unused this long ends. */
  sessionIdleMinutes: number;
  /** PASSWORD_RESET_TTL_MINUTES: how long a reset link e-mailed on request works. */
  resetTtlMinutes: number;
  /** SIGN_IN_LOCK_AFTER: consecutive failed sign-ins after which the account is locked. */
  lockAfter: number;
  /** SIGN_IN_LOCK_SECONDS: the first lock's length, doubled per further failure up to SIGN_IN_LOCK_MAX_SECONDS. */
  lockSeconds: number;
  lockMaxSeconds: number;
  /** SIGN_IN_PER_MINUTE: sign-in, reset and invitation requests per client address and minute. */
  perMinute: number;
}

/** Support queries and team notifications. */
export interface InsightsConfig {
  /** AGENT_SUCCESS_TARGET: success rate (percent) at or above which an agent counts as above target. */
  agentSuccessTarget: number;
  /** INSIGHTS_DEFAULT_WINDOW_DAYS: the window of dashboard, stats and analytics when no start_date is given. */
  defaultWindowDays: number;
}

export interface Config {
  env: 'production' | 'development' | 'test';
  host: string;
  port: number;
  logLevel: (typeof LOG_LEVELS)[number];
  /** Unset: an embedded PostgreSQL is started under dataDir. */
  databaseUrl: string | undefined;
  databasePoolMax: number;
  dataDir: string;
  /**
   * EMBEDDED_PG_RUNTIME_DIR: as root, where the embedded PostgreSQL's binaries and cluster go when
   * the postgres user cannot reach node_modules or DATA_DIR (a checkout in a private home).
   */
  embeddedRuntimeDir: string;
  redisUrl: string | undefined;
  publicBaseUrl: string;
  runWorkers: boolean;
  /** PostgreSQL schema of the job queue's tables. */
  jobsSchema: string;
  /** WORKER_HEARTBEAT_SECONDS, WORKER_DEAD_AFTER_SECONDS, WORKER_SWEEP_SECONDS (src/jobs/queue.ts). */
  workerTimings: { heartbeatSeconds: number; deadAfterSeconds: number; sweepSeconds: number };
  /** How long authenticated callers and company records may be cached (0: never). */
  cacheTtlMs: number;
  shutdownTimeoutMs: number;
  /**
   * HTTP_REQUEST_TIMEOUT_MS: the whole request (headers and body) must arrive in time, else 408;
   * HTTP_HEADERS_TIMEOUT_MS; HTTP_MAX_CONNECTIONS_PER_ADDRESS (0: no bound); HTTP_LISTEN_BACKLOG.
   */
  http: { requestTimeoutMs: number; headersTimeoutMs: number; maxConnectionsPerAddress: number; listenBacklog: number };
  /** METRICS_TOKEN: when set, GET /metrics asks for `Authorization: Bearer <token>`. */
  metricsToken: string | undefined;
  bootstrap: {
    apiKey: string | undefined;
    apiToken: string | undefined;
    adminEmail: string;
  };
  mail: { smtpUrl: string | undefined; from: string };
  invitationTtlDays: number;
  signIn: SignInConfig;
  rateLimits: RateLimitConfig;
  knowledge: KnowledgeConfig;
  chat: ChatConfig;
  speech: SpeechConfig;
  tts: TtsConfig;
  cpuPool: CpuPoolConfig;
  /** Support queries and team notifications. */
  insights: InsightsConfig;
  integrations: IntegrationsConfig;
  widget: WidgetConfig;
  webhooks: WebhooksConfig;
  mcp: McpConfig;
}

/** The process environment with `overrides` on top (the CLI runs its commands without workers). */
export function loadConfigWith(overrides: Env): Readonly<Config> {
  return loadConfig({ ...process.env, ...overrides });
}

export function loadConfig(env: Env = process.env): Readonly<Config> {
  const adminEmail = str(env, 'BOOTSTRAP_ADMIN_EMAIL') ?? 'admin@example.com';
  if (!/^[^@\s]+@[^@\s]+$/.test(adminEmail)) {
    throw new ConfigError('BOOTSTRAP_ADMIN_EMAIL', `must be an e-mail address, got "${adminEmail}"`);
  }
  const port = int(env, 'PORT', 8080, 0, 65535);
  const config: Config = {
    env: oneOf(env, 'NODE_ENV', ['production', 'development', 'test'] as const, 'production'),
    host: str(env, 'HOST') ?? '0.0.0.0',
    port,
    logLevel: oneOf(env, 'LOG_LEVEL', LOG_LEVELS, 'info'),
    databaseUrl: url(env, 'DATABASE_URL', ['postgres:', 'postgresql:']),
    databasePoolMax: int(env, 'DATABASE_POOL_MAX', 10, 1, 500),
    dataDir: path.resolve(str(env, 'DATA_DIR') ?? './data'),
    embeddedRuntimeDir: path.resolve(str(env, 'EMBEDDED_PG_RUNTIME_DIR') ?? '/var/lib/switchboard'),
    redisUrl: url(env, 'REDIS_URL', ['redis:', 'rediss:']),
    publicBaseUrl: (url(env, 'PUBLIC_BASE_URL', ['http:', 'https:']) ?? `http://localhost:${port}`).replace(/\/+$/, ''),
    runWorkers: bool(env, 'RUN_WORKERS', true),
    jobsSchema: identifier(env, 'JOBS_SCHEMA', 'pgboss'),
    workerTimings: workerTimings(env),
    cacheTtlMs: int(env, 'CACHE_TTL_MS', 60_000, 0, 3_600_000),
    shutdownTimeoutMs: int(env, 'SHUTDOWN_TIMEOUT_MS', 10_000, 0, 600_000),
    http: {
      requestTimeoutMs: int(env, 'HTTP_REQUEST_TIMEOUT_MS', 60_000, 100, 3_600_000),
      headersTimeoutMs: int(env, 'HTTP_HEADERS_TIMEOUT_MS', 10_000, 100, 600_000),
      maxConnectionsPerAddress: int(env, 'HTTP_MAX_CONNECTIONS_PER_ADDRESS', 256, 0, 1_000_000),
      listenBacklog: int(env, 'HTTP_LISTEN_BACKLOG', 4096, 1, 65_535),
    },
    metricsToken: metricsToken(env),
    bootstrap: {
      apiKey: secret(env, 'BOOTSTRAP_API_KEY', 'sk_'),
      apiToken: secret(env, 'BOOTSTRAP_API_TOKEN', 'ct_'),
      adminEmail: adminEmail.toLowerCase(),
    },
    mail: {
      smtpUrl: url(env, 'SMTP_URL', ['smtp:', 'smtps:']),
      from: str(env, 'MAIL_FROM') ?? 'Switchboard <no-reply@switchboard.local>',
    },
    invitationTtlDays: int(env, 'INVITATION_TTL_DAYS', 7, 1, 365),
    signIn: {
      sessionTtlHours: int(env, 'SESSION_TTL_HOURS', 168, 1, 8760),
      sessionIdleMinutes: int(env, 'SESSION_IDLE_MINUTES', 720, 1, 525_600),
      resetTtlMinutes: int(env, 'PASSWORD_RESET_TTL_MINUTES', 60, 5, 10_080),
      lockAfter: int(env, 'SIGN_IN_LOCK_AFTER', 5, 1, 100),
      lockSeconds: int(env, 'SIGN_IN_LOCK_SECONDS', 60, 1, 86_400),
      lockMaxSeconds: int(env, 'SIGN_IN_LOCK_MAX_SECONDS', 3600, 1, 604_800),
      perMinute: int(env, 'SIGN_IN_PER_MINUTE', 30, 1, 10_000_000),
    },
    insights: {
      agentSuccessTarget: int(env, 'AGENT_SUCCESS_TARGET', 80, 0, 100),
      defaultWindowDays: int(env, 'INSIGHTS_DEFAULT_WINDOW_DAYS', 30, 1, 3660),
    },
    rateLimits: {
      enabled: bool(env, 'RATE_LIMIT_ENABLED', true),
      insightsPerHour: int(env, 'RATE_LIMIT_INSIGHTS_PER_HOUR', 1000, 1, 10_000_000),
      insightsPerMinute: int(env, 'RATE_LIMIT_INSIGHTS_PER_MINUTE', 100, 1, 10_000_000),
      publicPerMinute: int(env, 'RATE_LIMIT_PUBLIC_PER_MINUTE', 600, 1, 10_000_000),
      chatConversationsPerMinute: int(env, 'RATE_LIMIT_CHAT_CONVERSATIONS_PER_MINUTE', 100, 1, 10_000_000),
      chatMessagesPerMinute: int(env, 'RATE_LIMIT_CHAT_PER_MINUTE', 60, 1, 10_000_000),
      chatStreamsPerMinute: int(env, 'RATE_LIMIT_CHAT_STREAM_PER_MINUTE', 30, 1, 10_000_000),
    },
    chat: {
      llmProviders: llmProviders(env),
      llmHttp: llmHttpConfig(env),
      heartbeatMs: int(env, 'CHAT_HEARTBEAT_MS', 15_000, 100, 600_000),
      historyLimit: int(env, 'CHAT_HISTORY_LIMIT', 20, 0, 500),
      retrievalTopK: int(env, 'CHAT_RETRIEVAL_TOP_K', 4, 1, 50),
      llmTimeoutMs: int(env, 'CHAT_LLM_TIMEOUT_MS', 120_000, 1000, 3_600_000),
      maxAudioBytes: int(env, 'CHAT_MAX_AUDIO_BYTES', 25 * 1024 * 1024, 1024, 500 * 1024 * 1024),
      streamResumeMs: int(env, 'CHAT_STREAM_RESUME_MS', 15_000, 0, 600_000),
      streamRetryMs: int(env, 'CHAT_STREAM_RETRY_MS', 3000, 0, 600_000),
      maxToolSteps: int(env, 'CHAT_MAX_TOOL_STEPS', 5, 0, 50),
      turnSweepMs: int(env, 'CHAT_TURN_SWEEP_MS', 10_000, 100, 600_000),
    },
    knowledge: knowledgeConfig(env),
    speech: speechConfig(env),
    tts: ttsConfig(env),
    cpuPool: cpuPoolConfig(env),
    integrations: integrationsConfig(env),
    widget: widgetConfig(env),
    webhooks: webhooksConfig(env),
    mcp: mcpConfig(env),
  };
  return deepFreeze(config);
}

function deepFreeze<T extends object>(value: T): Readonly<T> {
  for (const child of Object.values(value)) {
    if (child && typeof child === 'object') deepFreeze(child as object);
  }
  return Object.freeze(value);
}
