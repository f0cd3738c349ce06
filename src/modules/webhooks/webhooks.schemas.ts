import { Type, type Static } from '@sinclair/typebox';
import { Nullable, Page, SkipLimit, StringEnum, Timestamp, Uuid } from '../../http/schemas.js';
import { EVENT_TYPE_NAMES } from './webhooks.catalog.js';

/** Bodies refuse unknown fields (a 400 naming them): ids, secrets and timestamps are never input. */
const closed = { additionalProperties: false } as const;

export const MAX_URL_LENGTH = 2048;
export const MAX_DESCRIPTION_LENGTH = 500;

const Url = Type.String({
  minLength: 1,
  maxLength: MAX_URL_LENGTH,
  description: 'Where deliveries are POSTed: http or https, no credentials in the address.',
});
const Events = Type.Array(StringEnum(EVENT_TYPE_NAMES), {
  minItems: 1,
  maxItems: EVENT_TYPE_NAMES.length,
  uniqueItems: true,
  description: 'Event types delivered to this endpoint (GET /webhooks/event-types).',
});
const Description = Type.String({ maxLength: MAX_DESCRIPTION_LENGTH });

export const CreateWebhookBody = Type.Object(
  {
    url: Url,
    events: Events,
    description: Type.Optional(Description),
    enabled: Type.Optional(Type.Boolean({ default: true })),
  },
  closed,
);
export type CreateWebhookBody = Static<typeof CreateWebhookBody>;

export const UpdateWebhookBody = Type.Object(
  {
    url: Type.Optional(Url),
    events: Type.Optional(Events),
    description: Type.Optional(Description),
    enabled: Type.Optional(
      Type.Boolean({ description: 'true re-enables an endpoint the platform disabled after failing deliveries.' }),
    ),
  },
  { ...closed, minProperties: 1 },
);
export type UpdateWebhookBody = Static<typeof UpdateWebhookBody>;

export const Webhook = Type.Object(
  {
    id: Uuid(),
    company_id: Uuid(),
    url: Type.String(),
    description: Type.String(),
    events: Type.Array(Type.String()),
    enabled: Type.Boolean(),
    disabled_reason: Nullable(
      Type.String({ description: 'Why the platform disabled the endpoint; null when a person did, or when enabled.' }),
    ),
    previous_secret_expires_at: Nullable(
      Timestamp({ description: 'After a rotation, until when the previous secret also signs deliveries.' }),
    ),
    created_at: Timestamp(),
    updated_at: Timestamp(),
  },
  { $id: 'Webhook' },
);
export type Webhook = Static<typeof Webhook>;

export const CreatedWebhook = Type.Object(
  {
    ...Webhook.properties,
    secret: Type.String({ description: 'The signing secret (whsec_…). Shown only in this answer.' }),
  },
  { description: 'The endpoint, with its signing secret shown this once.' },
);
export type CreatedWebhook = Static<typeof CreatedWebhook>;

export const RotatedSecret = Type.Object({
  secret: Type.String({ description: 'The new signing secret (whsec_…). Shown only in this answer.' }),
  previous_secret_expires_at: Timestamp({ description: 'Until when the previous secret also signs deliveries.' }),
});

export const Attempt = Type.Object({
  at: Timestamp(),
  response_status: Nullable(Type.Integer({ description: "The receiver's HTTP status; null when it did not answer." })),
  latency_ms: Type.Integer(),
  error: Nullable(Type.String()),
});

export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const;

export const Delivery = Type.Object(
  {
    id: Uuid({ description: 'Also the `webhook-id` header, the same on every attempt.' }),
    event_id: Uuid(),
    event_type: Type.String(),
    status: StringEnum(DELIVERY_STATUSES),
    attempts: Type.Array(Attempt),
    next_attempt_at: Nullable(Timestamp()),
    created_at: Timestamp(),
  },
  { $id: 'WebhookDelivery' },
);
export type Delivery = Static<typeof Delivery>;

export const DeliveryPage = Page(Type.Ref(Delivery));

export const DeliveriesQuery = Type.Object(
  { ...SkipLimit(20, 100), status: Type.Optional(StringEnum(DELIVERY_STATUSES)) },
  closed,
);
export type DeliveriesQuery = Static<typeof DeliveriesQuery>;

export const EventTypeInfo = Type.Object({
  type: Type.String(),
  description: Type.String(),
  example_payload: Type.Object(
    { type: Type.String(), timestamp: Timestamp(), data: Type.Object({}, { additionalProperties: true }) },
    { description: 'A payload of this type as delivered.' },
  ),
});
