/**
 * Webhook endpoints of a company (DESIGN §14): create, read, update, delete, rotate the secret,
 * send a test, read the delivery log, retry a delivery. Members read; developers and above
 * manage (as for integrations: an endpoint sends the company's data out, like a connector).
 * The signing secret is sealed at rest and shown only in the create and rotate answers.
 */
import { randomUUID } from 'node:crypto';
import type { Db } from '../../db/database.js';
import type { CompanyContext } from '../../http/caller.js';
import { AppErrors } from '../../http/errors.js';
import type { PageOf } from '../../http/schemas.js';
import type { Clock } from '../../lib/clock.js';
import { hasRole } from '../../lib/roles.js';
import type { SecretBox } from '../../lib/secret-box.js';
import { EVENT_TYPES, TEST_EVENT_TYPE } from './webhooks.catalog.js';
import * as repo from './webhooks.repo.js';
import type {
  CreatedWebhook,
  CreateWebhookBody,
  DeliveriesQuery,
  Delivery,
  UpdateWebhookBody,
  Webhook,
} from './webhooks.schemas.js';
import { generateWebhookSecret } from './webhooks.signing.js';

/** Endpoints per company. */
export const MAX_ENDPOINTS = 100;
/** How long the previous secret keeps signing after a rotation. */
export const PREVIOUS_SECRET_GRACE_MS = 24 * 3_600_000;

export interface WebhooksDeps {
  db: Db;
  clock: Clock;
  box: SecretBox;
  /** Why an address is refused (scheme, credentials, a private address), or null. */
  checkUrl: (url: string) => string | null;
  /** A delivery was made due (a test, a retry): wake this process's sender if it runs. */
  wake: () => void;
}

/** Where a sealed secret belongs: a sealed value copied to another endpoint or slot does not open. */
export function secretContext(companyId: string, endpointId: string, which: 'current' | 'previous'): string {
  return `webhook:${companyId}:${endpointId}:${which}`;
}

function requireDeveloper(context: CompanyContext, what: string) {
  if (!hasRole(context.role, 'developer')) {
    throw AppErrors.forbidden(`${what} needs the developer role; your role is ${context.role}`);
  }
}

export function toWebhook(row: repo.EndpointRow, now: Date): Webhook {
  const expires = row.previous_secret_expires_at;
  return {
    id: row.id,
    company_id: row.company_id,
    url: row.url,
    description: row.description,
    events: row.events,
    enabled: row.enabled,
    disabled_reason: row.disabled_reason,
    previous_secret_expires_at: expires && expires > now ? expires.toISOString() : null,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

type DeliveryRow = NonNullable<Awaited<ReturnType<typeof repo.findDelivery>>>;
type AttemptRow = Awaited<ReturnType<typeof repo.attemptsOf>>[number];

function toDelivery(row: DeliveryRow, attempts: AttemptRow[]): Delivery {
  return {
    id: row.id,
    event_id: row.event_id,
    event_type: row.event_type,
    status: row.status,
    attempts: attempts.map((attempt) => ({
      at: attempt.at.toISOString(),
      response_status: attempt.response_status,
      latency_ms: attempt.latency_ms,
      error: attempt.error,
    })),
    next_attempt_at: row.next_attempt_at?.toISOString() ?? null,
    created_at: row.created_at.toISOString(),
  };
}

export function createWebhooksService(deps: WebhooksDeps) {
  const { db, clock, box } = deps;

  function checkUrl(url: string) {
    const problem = deps.checkUrl(url);
    if (problem) throw AppErrors.validation(`Invalid field 'url': the address ${problem}`);
  }

  async function endpoint(context: CompanyContext, id: string) {
    const row = await repo.findEndpoint(db, context.companyId, id);
    if (!row) throw AppErrors.notFound('Webhook', id);
    return row;
  }

  async function withAttempts(rows: DeliveryRow[]): Promise<Delivery[]> {
    const attempts = await repo.attemptsOf(
      db,
      rows.map((row) => row.id),
    );
    const byDelivery = new Map<string, AttemptRow[]>();
    for (const attempt of attempts)
      byDelivery.set(attempt.delivery_id, [...(byDelivery.get(attempt.delivery_id) ?? []), attempt]);
    return rows.map((row) => toDelivery(row, byDelivery.get(row.id) ?? []));
  }

  return {
    /** The catalog, each type with an example payload as delivered. */
    eventTypes() {
      return EVENT_TYPES.map((entry) => ({
        type: entry.type,
        description: entry.description,
        example_payload: { type: entry.type, timestamp: '2026-03-14T09:26:53.589Z', data: entry.example },
      }));
    },

    async list(context: CompanyContext): Promise<Webhook[]> {
      const now = clock.now();
      return (await repo.listEndpoints(db, context.companyId)).map((row) => toWebhook(row, now));
    },

    async get(context: CompanyContext, id: string): Promise<Webhook> {
      return toWebhook(await endpoint(context, id), clock.now());
    },

    async create(context: CompanyContext, body: CreateWebhookBody): Promise<CreatedWebhook> {
      requireDeveloper(context, 'Creating a webhook');
      checkUrl(body.url);
      const id = randomUUID();
      const secret = generateWebhookSecret();
      const now = clock.now();
      const row = await db.transaction().execute(async (trx) => {
        // Serializes creations per company, so the limit holds under concurrent requests.
        await trx.selectFrom('companies').select('id').where('id', '=', context.companyId).forUpdate().execute();
        if ((await repo.countEndpoints(trx, context.companyId)) >= MAX_ENDPOINTS) {
          throw AppErrors.conflict(`A company has at most ${MAX_ENDPOINTS} webhooks; delete one first`);
        }
        return repo.insertEndpoint(trx, {
          id,
          company_id: context.companyId,
          url: body.url,
          description: body.description ?? '',
          events: body.events,
          enabled: body.enabled ?? true,
          secret: box.seal(secret, secretContext(context.companyId, id, 'current')),
          created_by: context.userId,
          created_at: now,
          updated_at: now,
        });
      });
      return { ...toWebhook(row, now), secret };
    },

    async update(context: CompanyContext, id: string, body: UpdateWebhookBody): Promise<Webhook> {
      requireDeveloper(context, 'Changing a webhook');
      if (body.url !== undefined) checkUrl(body.url);
      const now = clock.now();
      const row = await repo.updateEndpoint(db, context.companyId, id, {
        ...(body.url !== undefined ? { url: body.url } : {}),
        ...(body.events !== undefined ? { events: body.events } : {}),
        ...(body.description !== undefined ? { description: body.description } : {}),
        // Enabling (again) clears why the platform disabled it; so does disabling by hand.
        ...(body.enabled !== undefined ? { enabled: body.enabled, disabled_reason: null } : {}),
        updated_at: now,
      });
      if (!row) throw AppErrors.notFound('Webhook', id);
      return toWebhook(row, now);
    },

    async remove(context: CompanyContext, id: string): Promise<void> {
      requireDeveloper(context, 'Deleting a webhook');
      if (!(await repo.deleteEndpoint(db, context.companyId, id))) throw AppErrors.notFound('Webhook', id);
    },

    /** A new secret; the current one keeps signing (a second signature) for 24 hours. */
    async rotateSecret(context: CompanyContext, id: string) {
      requireDeveloper(context, 'Rotating a webhook secret');
      const secret = generateWebhookSecret();
      const now = clock.now();
      const expires = new Date(now.getTime() + PREVIOUS_SECRET_GRACE_MS);
      await db.transaction().execute(async (trx) => {
        const row = await repo.findEndpoint(trx, context.companyId, id, true);
        if (!row) throw AppErrors.notFound('Webhook', id);
        const current = box.open(row.secret, secretContext(row.company_id, row.id, 'current'));
        await repo.updateEndpoint(trx, context.companyId, id, {
          secret: box.seal(secret, secretContext(row.company_id, row.id, 'current')),
          previous_secret: box.seal(current, secretContext(row.company_id, row.id, 'previous')),
          previous_secret_expires_at: expires,
          updated_at: now,
        });
      });
      return { secret, previous_secret_expires_at: expires.toISOString() };
    },

    /** Sends a `webhook.test` message to this endpoint alone (one attempt); the delivery, pending. */
    async test(context: CompanyContext, id: string): Promise<Delivery> {
      requireDeveloper(context, 'Testing a webhook');
      const row = await endpoint(context, id);
      if (!row.enabled) throw AppErrors.conflict(`Webhook ${id} is disabled; enable it (PATCH enabled: true) first`);
      const now = clock.now();
      const payload = JSON.stringify({
        type: TEST_EVENT_TYPE,
        timestamp: now.toISOString(),
        data: { webhook_id: row.id, message: 'A test message from Switchboard.' },
      });
      const delivery = await db.transaction().execute(async (trx) => {
        const event = await repo.insertDispatchedEvent(trx, {
          company_id: row.company_id,
          type: TEST_EVENT_TYPE,
          resource_id: row.id,
          occurred_at: now,
          payload,
        });
        return repo.insertDelivery(trx, {
          company_id: row.company_id,
          endpoint_id: row.id,
          event_id: event.id,
          event_type: TEST_EVENT_TYPE,
          next_attempt_at: now,
          single_attempt: true,
        });
      });
      deps.wake();
      return toDelivery(delivery, []);
    },

    async deliveries(context: CompanyContext, id: string, query: DeliveriesQuery): Promise<PageOf<Delivery>> {
      await endpoint(context, id);
      const { rows, total } = await repo.listDeliveries(db, context.companyId, id, query);
      return { data: await withAttempts(rows), total, skip: query.skip, limit: query.limit };
    },

    /** One more attempt now, with the same webhook-id; a pending delivery is made due at once. */
    async retry(context: CompanyContext, id: string, deliveryId: string): Promise<Delivery> {
      requireDeveloper(context, 'Retrying a webhook delivery');
      const row = await endpoint(context, id);
      if (!row.enabled) throw AppErrors.conflict(`Webhook ${id} is disabled; enable it (PATCH enabled: true) first`);
      const delivery = await repo.findDelivery(db, context.companyId, id, deliveryId);
      if (!delivery) throw AppErrors.notFound('Delivery', deliveryId);
      await repo.requeueDelivery(db, deliveryId, clock.now());
      deps.wake();
      const updated = await repo.findDelivery(db, context.companyId, id, deliveryId);
      return (await withAttempts([updated ?? delivery]))[0]!;
    },
  };
}

export type WebhooksService = ReturnType<typeof createWebhooksService>;
