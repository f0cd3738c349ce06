/**
 * The webhooks module's surface: createWebhooksModule (the service of /api/public/webhooks and
 * the worker that fans events out and sends them), and the schemas the app registers.
 */
import type { Db, Executor } from '../../db/database.js';
import type { Clock } from '../../lib/clock.js';
import type { SecretBox } from '../../lib/secret-box.js';
import type { WebhookSender } from '../../ports/webhook-sender.js';
import type { ResourceKind } from './webhooks.catalog.js';
import { createDispatcher, type DispatcherOptions, type ResourceReader } from './webhooks.dispatcher.js';
import { Delivery, Webhook } from './webhooks.schemas.js';
import { createWebhooksService, secretContext } from './webhooks.service.js';

export { webhooksRoutes } from './webhooks.routes.js';
export type { WebhooksService } from './webhooks.service.js';
export type { ResourceReader } from './webhooks.dispatcher.js';

/** Schemas with an $id that routes reference (the app adds them to the OpenAPI components). */
export const WEBHOOKS_SCHEMAS = [Webhook, Delivery];

/** The NOTIFY channel of the outbox (migration 0160): a listener wakes the sender with it. */
export const WEBHOOK_EVENTS_CHANNEL = 'switchboard_webhook_events';

export function createWebhooksModule(
  options: DispatcherOptions,
  deps: {
    db: Db;
    clock: Clock;
    box: SecretBox;
    sender: WebhookSender;
    /** Readers of the resources events carry, as the API shows them. */
    readers: Partial<Record<ResourceKind, ResourceReader>>;
    /** A team notification that an endpoint was disabled, in `trx`. */
    onDisabled: (
      trx: Executor,
      input: { companyId: string; endpointId: string; origin: string; reason: string },
    ) => Promise<void>;
    log: { warn(object: object, message: string): void; info(object: object, message: string): void };
  },
) {
  const dispatcher = createDispatcher(options, {
    db: deps.db,
    clock: deps.clock,
    sender: deps.sender,
    readers: deps.readers,
    onDisabled: deps.onDisabled,
    log: deps.log,
    openSecret: (sealed, where, which) =>
      deps.box.open(sealed, secretContext(where.company_id, where.endpoint_id, which)),
  });
  const service = createWebhooksService({
    db: deps.db,
    clock: deps.clock,
    box: deps.box,
    checkUrl: (url) => deps.sender.checkUrl(url),
    wake: () => dispatcher.wake(),
  });
  return Object.assign(service, { dispatcher });
}

export type WebhooksModule = ReturnType<typeof createWebhooksModule>;
