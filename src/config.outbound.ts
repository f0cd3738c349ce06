/**
 * Settings of outbound calls, integrations' and webhooks', parsed from the environment that
 * src/config.ts (the only reader of process.env) passes in.
 */
import { bool, ConfigError, int, str, type Env } from './config.parse.js';

/** Integrations (DESIGN §10): the key that encrypts their secrets and the limits of vendor calls. */
export interface IntegrationsConfig {
  /**
   * SECRET_KEY: the AES-256-GCM key of stored integration secrets, as 64 hex characters
   * (normalized to lower case). Unset: a key generated once into DATA_DIR/secret.key is used.
   */
  secretKeyHex: string | undefined;
  /** ALLOW_PRIVATE_URLS: let connectors reach loopback/private/link-local addresses (tests only). */
  allowPrivateUrls: boolean;
  /** INTEGRATION_TIMEOUT_MS: upper bound of one vendor call (connect, answer and body). */
  timeoutMs: number;
  /** INTEGRATION_MAX_RESPONSE_KB: a vendor answer larger than this is refused. */
  maxResponseBytes: number;
}

/** SECRET_KEY: 32 bytes written as 64 hex characters or as base64 (standard or URL-safe). */
function secretKey(env: Env): string | undefined {
  const raw = str(env, 'SECRET_KEY');
  if (raw === undefined) return undefined;
  if (/^[0-9a-fA-F]{64}$/.test(raw)) return raw.toLowerCase();
  if (/^[A-Za-z0-9+/_-]{43}=?$/.test(raw)) {
    const bytes = Buffer.from(raw.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
    if (bytes.length === 32) return bytes.toString('hex');
  }
  throw new ConfigError(
    'SECRET_KEY',
    'must be 32 random bytes as 64 hex characters or base64 (e.g. `openssl rand -base64 32`)',
  );
}

export function integrationsConfig(env: Env): IntegrationsConfig {
  return {
    secretKeyHex: secretKey(env),
    allowPrivateUrls: bool(env, 'ALLOW_PRIVATE_URLS', false),
    timeoutMs: int(env, 'INTEGRATION_TIMEOUT_MS', 10_000, 100, 300_000),
    maxResponseBytes: int(env, 'INTEGRATION_MAX_RESPONSE_KB', 2048, 1, 102_400) * 1024,
  };
}

/** Outbound webhooks (DESIGN §14): the limits of a send, the retry schedule, retention. */
export interface WebhooksConfig {
  /** WEBHOOK_WORKER: whether this process's workers (RUN_WORKERS) fan out and send webhooks. */
  worker: boolean;
  /** ALLOW_PRIVATE_URLS: let deliveries reach loopback/private/link-local addresses (tests only). */
  allowPrivateUrls: boolean;
  /** WEBHOOK_TIMEOUT_MS: upper bound of one send (connect, answer and body). */
  timeoutMs: number;
  /** WEBHOOK_MAX_RESPONSE_KB: a receiver's answer larger than this fails the attempt. */
  maxResponseBytes: number;
  /**
   * WEBHOOK_RETRY_SCHEDULE: the waits before each retry (default the Standard Webhooks schedule,
   * `5s,5m,30m,2h,5h,10h,10h`); tests shorten it.
   */
  retrySchedule: readonly number[];
  /** WEBHOOK_ENDPOINT_CONCURRENCY: deliveries of one endpoint in flight at once, across workers. */
  endpointConcurrency: number;
  /** WEBHOOK_CONCURRENCY: deliveries in flight per worker process. */
  concurrency: number;
  /** WEBHOOK_POLL_MS: how often a worker looks for retries falling due (it is also woken by new events). */
  pollMs: number;
  /** WEBHOOK_LEASE_MS: how long a delivery stays with the worker sending it (default: the time limit + 30 s). */
  leaseMs: number;
  /** WEBHOOK_RETENTION_DAYS: events, deliveries and attempts older than this are deleted. */
  retentionDays: number;
}

/** The Standard Webhooks retry schedule: after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h. */
export const DEFAULT_RETRY_SCHEDULE_MS: readonly number[] = [
  5_000,
  5 * 60_000,
  30 * 60_000,
  2 * 3_600_000,
  5 * 3_600_000,
  10 * 3_600_000,
  10 * 3_600_000,
];

/** Durations such as `5s,5m,30m,2h` (ms, s, m, h; a bare number is ms), 1 to 20 of them; null when malformed. */
export function parseSchedule(text: string): number[] | null {
  const units: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
  const out: number[] = [];
  for (const part of text.split(',').map((item) => item.trim())) {
    const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(part);
    if (!match) return null;
    out.push(Math.round(Number(match[1]) * (units[match[2] ?? 'ms'] ?? 1)));
  }
  return out.length > 0 && out.length <= 20 ? out : null;
}

export function webhooksConfig(env: Env): WebhooksConfig {
  const timeoutMs = int(env, 'WEBHOOK_TIMEOUT_MS', 15_000, 100, 120_000);
  const scheduleText = str(env, 'WEBHOOK_RETRY_SCHEDULE');
  const retrySchedule = scheduleText === undefined ? DEFAULT_RETRY_SCHEDULE_MS : parseSchedule(scheduleText);
  if (!retrySchedule) {
    throw new ConfigError('WEBHOOK_RETRY_SCHEDULE', 'must be 1 to 20 durations such as 5s,5m,30m,2h (ms, s, m, h)');
  }
  return {
    worker: bool(env, 'WEBHOOK_WORKER', true),
    allowPrivateUrls: bool(env, 'ALLOW_PRIVATE_URLS', false),
    timeoutMs,
    maxResponseBytes: int(env, 'WEBHOOK_MAX_RESPONSE_KB', 64, 1, 10_240) * 1024,
    retrySchedule,
    endpointConcurrency: int(env, 'WEBHOOK_ENDPOINT_CONCURRENCY', 4, 1, 100),
    concurrency: int(env, 'WEBHOOK_CONCURRENCY', 64, 1, 1000),
    pollMs: int(env, 'WEBHOOK_POLL_MS', 1000, 10, 60_000),
    leaseMs: int(env, 'WEBHOOK_LEASE_MS', timeoutMs + 30_000, timeoutMs + 1000, 3_600_000),
    retentionDays: int(env, 'WEBHOOK_RETENTION_DAYS', 30, 1, 3650),
  };
}
