/**
 * The webhooks worker, in every process that runs workers: fans the outbox out to deliveries and
 * sends them. Woken by the outbox's NOTIFY (so a committed event reaches its receivers within
 * milliseconds) and by a poll every `pollMs` (retries falling due, a missed notification).
 *
 * At least once, across crashes: an event is fanned out in one transaction (its deliveries and
 * its `dispatched_at` commit together); a delivery is leased to this worker until `leaseMs` from
 * now, sent outside any transaction, and its outcome written only while the lease is still this
 * worker's. A worker killed mid-send leaves a lease that runs out, and the delivery is sent again
 * (same webhook-id) by whichever worker leases it next.
 */
import { randomUUID } from 'node:crypto';
import type { Db, Executor } from '../../db/database.js';
import type { Clock } from '../../lib/clock.js';
import type { WebhookOutcome, WebhookSender } from '../../ports/webhook-sender.js';
import { eventType, type ResourceKind } from './webhooks.catalog.js';
import * as repo from './webhooks.repo.js';
import { nextRetryDelay } from './webhooks.schedule.js';
import { webhookHeaders } from './webhooks.signing.js';

/** Reads a resource as the API shows it, or null when it no longer exists. */
export type ResourceReader = (companyId: string, id: string) => Promise<object | null>;

export interface DispatcherOptions {
  /** Waits before each retry (WEBHOOK_RETRY_SCHEDULE). */
  schedule: readonly number[];
  /** Deliveries of one endpoint in flight at once, across workers. */
  perEndpoint: number;
  /** Deliveries in flight in this process. */
  concurrency: number;
  pollMs: number;
  /** How long a lease holds: longer than a send can take (the sender's time limit and more). */
  leaseMs: number;
  retentionDays: number;
}

export interface DispatcherDeps {
  db: Db;
  clock: Clock;
  sender: WebhookSender;
  openSecret: (
    sealed: string,
    endpoint: { company_id: string; endpoint_id: string },
    which: 'current' | 'previous',
  ) => string;
  readers: Partial<Record<ResourceKind, ResourceReader>>;
  /** Tells the company's team that an endpoint was disabled (a team notification, in `trx`). */
  onDisabled: (
    trx: Executor,
    input: { companyId: string; endpointId: string; origin: string; reason: string },
  ) => Promise<void>;
  log: { warn(object: object, message: string): void; info(object: object, message: string): void };
  random?: () => number;
}

const FAN_OUT_BATCH = 100;
const RETENTION_EVERY_MS = 3_600_000;

export function createDispatcher(options: DispatcherOptions, deps: DispatcherDeps) {
  const { db, clock, sender, log } = deps;
  const token = randomUUID();
  const stopping = new AbortController();
  const inFlight = new Set<Promise<void>>();
  let running = false;
  let closing = false;
  let pumping = false;
  let again = false;
  let poll: NodeJS.Timeout | undefined;
  let retention: NodeJS.Timeout | undefined;

  async function render(event: { company_id: string; type: string; resource_id: string }): Promise<object> {
    const kind = eventType(event.type)?.resource;
    const reader = kind ? deps.readers[kind] : undefined;
    const data = reader ? await reader(event.company_id, event.resource_id) : null;
    // A resource deleted before its event went out is named by its id alone.
    return data ?? { id: event.resource_id };
  }

  /** Fans out one batch of events; how many events it handled. */
  async function fanOutBatch(): Promise<number> {
    return db.transaction().execute(async (trx) => {
      const events = await repo.lockUndispatchedEvents(trx, FAN_OUT_BATCH);
      const now = clock.now();
      for (const event of events) {
        const payload = JSON.stringify({
          type: event.type,
          timestamp: event.occurred_at.toISOString(),
          data: await render(event),
        });
        await repo.markDispatched(trx, event.id, payload, now);
        await repo.fanOut(trx, event, now);
      }
      return events.length;
    });
  }

  function secretsOf(context: Awaited<ReturnType<typeof repo.sendingContext>>[number], now: Date): string[] {
    const where = { company_id: context.company_id, endpoint_id: context.endpoint_id };
    const secrets = [deps.openSecret(context.secret, where, 'current')];
    if (context.previous_secret && context.previous_secret_expires_at && context.previous_secret_expires_at > now) {
      secrets.push(deps.openSecret(context.previous_secret, where, 'previous'));
    }
    return secrets;
  }

  async function record(claimed: repo.ClaimedDelivery, outcome: WebhookOutcome, at: Date): Promise<void> {
    const now = clock.now();
    const attempts = claimed.attempt_count + 1;
    const delay =
      outcome.ok || claimed.single_attempt
        ? null
        : nextRetryDelay(options.schedule, attempts, outcome.retryAfterMs, deps.random);
    const status = outcome.ok ? 'succeeded' : delay === null ? 'failed' : 'pending';
    await db.transaction().execute(async (trx) => {
      await repo.insertAttempt(trx, {
        delivery_id: claimed.id,
        at,
        response_status: outcome.status,
        latency_ms: outcome.latencyMs,
        error: outcome.error,
      });
      const nextAttemptAt = delay === null ? null : new Date(now.getTime() + delay);
      const mine = await repo.finishAttempt(trx, { id: claimed.id, token }, { status, nextAttemptAt, now });
      if (!mine) return;
      if (outcome.ok) await repo.markEndpointSuccess(trx, claimed.endpoint_id, now);
      if (status === 'failed' && !claimed.single_attempt) await disableIfFailing(trx, claimed, attempts, now);
    });
  }

  async function disableIfFailing(trx: Executor, claimed: repo.ClaimedDelivery, attempts: number, now: Date) {
    const reason = `Every attempt of delivery ${claimed.id} (${attempts} over the retry schedule) failed, with no successful delivery since.`;
    const disabled = await repo.disableIfFailing(trx, claimed.endpoint_id, claimed.created_at, reason, now);
    if (!disabled) return;
    const origin = new URL(disabled.url).origin;
    log.warn({ endpointId: disabled.id, companyId: disabled.company_id, origin }, 'webhook endpoint disabled');
    await deps.onDisabled(trx, { companyId: disabled.company_id, endpointId: disabled.id, origin, reason });
  }

  async function deliver(
    claimed: repo.ClaimedDelivery,
    context: Awaited<ReturnType<typeof repo.sendingContext>>[number],
  ) {
    const at = clock.now();
    let outcome: WebhookOutcome;
    if (context.payload === null) {
      outcome = { ok: false, status: null, latencyMs: 0, error: 'the event has no payload' };
    } else {
      const timestamp = Math.floor(at.getTime() / 1000);
      const headers = webhookHeaders(secretsOf(context, at), claimed.id, timestamp, context.payload);
      outcome = await sender.send({ url: context.url, headers, body: context.payload, signal: stopping.signal });
      // A send cut short by this worker stopping is not an attempt: the lease is handed back.
      if (stopping.signal.aborted && outcome.status === null) return;
    }
    await record(claimed, outcome, at);
  }

  /** Leases what this process has room for and starts sending it; how many it started. */
  async function leaseAndSend(): Promise<number> {
    const room = options.concurrency - inFlight.size;
    if (room <= 0) return 0;
    const claimed = await repo.leaseDue(db, {
      token,
      leaseSeconds: options.leaseMs / 1000,
      perEndpoint: options.perEndpoint,
      limit: room,
    });
    if (claimed.length === 0) return 0;
    const contexts = new Map(
      (
        await repo.sendingContext(
          db,
          claimed.map((row) => row.id),
        )
      ).map((row) => [row.id, row]),
    );
    for (const row of claimed) {
      const context = contexts.get(row.id);
      if (!context) continue;
      const work = deliver(row, context)
        .catch((error: unknown) =>
          log.warn({ err: error, deliveryId: row.id }, 'webhook delivery could not be recorded'),
        )
        .finally(() => {
          inFlight.delete(work);
          wake();
        });
      inFlight.add(work);
    }
    return claimed.length;
  }

  async function pump(): Promise<void> {
    if (pumping) {
      again = true;
      return;
    }
    pumping = true;
    try {
      do {
        again = false;
        while ((await fanOutBatch()) === FAN_OUT_BATCH && !closing);
        if (!closing) await leaseAndSend();
      } while (again && !closing);
    } catch (error) {
      log.warn({ err: error }, 'webhook dispatch failed; retrying at the next poll');
    } finally {
      pumping = false;
    }
  }

  function wake(): void {
    if (running && !closing) void pump();
  }

  async function sweepExpired(): Promise<number> {
    const before = new Date(clock.now().getTime() - options.retentionDays * 86_400_000);
    let total = 0;
    for (;;) {
      const deleted = await repo.deleteExpired(db, before, 1000);
      total += deleted;
      if (deleted < 1000) return total;
    }
  }

  return {
    wake,
    /** Deletes events, deliveries and attempts past the retention period; how many events. */
    sweepExpired,
    start() {
      if (running) return;
      running = true;
      poll = setInterval(wake, options.pollMs);
      poll.unref();
      retention = setInterval(
        () => void sweepExpired().catch((error: unknown) => log.warn({ err: error }, 'webhook retention sweep failed')),
        RETENTION_EVERY_MS,
      );
      retention.unref();
      wake();
    },
    /** Stops leasing; waits for sends in flight (up to the lease), then hands back what is left. */
    async stop(): Promise<void> {
      if (!running) return;
      closing = true;
      clearInterval(poll);
      clearInterval(retention);
      const graceful = Promise.all([...inFlight]);
      const timer = new Promise((resolve) => setTimeout(resolve, Math.min(options.leaseMs, 10_000)).unref());
      await Promise.race([graceful, timer]);
      stopping.abort();
      await Promise.all([...inFlight]);
      running = false;
      await repo
        .releaseLeases(db, token)
        .catch((error: unknown) => log.warn({ err: error }, 'webhook leases not released'));
    },
  };
}

export type Dispatcher = ReturnType<typeof createDispatcher>;
