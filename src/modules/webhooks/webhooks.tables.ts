/** Kysely types of the webhooks tables (migrations/0160_create_webhooks.sql). */
import type { Generated } from 'kysely';
import type { DefaultTimestamp, Timestamp } from '../../db/columns.js';

/** A company's receiving address; `secret` and `previous_secret` are sealed. */
export interface WebhookEndpointsTable {
  id: Generated<string>;
  company_id: string;
  url: string;
  description: Generated<string>;
  events: string[];
  enabled: Generated<boolean>;
  disabled_reason: string | null;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Timestamp | null;
  last_success_at: Timestamp | null;
  created_by: string | null;
  created_at: DefaultTimestamp;
  updated_at: DefaultTimestamp;
}

/** The outbox: an event recorded in the transaction of its change, fanned out later. */
export interface WebhookEventsTable {
  id: Generated<string>;
  company_id: string;
  type: string;
  resource_id: string;
  occurred_at: DefaultTimestamp;
  payload: string | null;
  dispatched_at: Timestamp | null;
}

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed';

export interface WebhookDeliveriesTable {
  id: Generated<string>;
  company_id: string;
  endpoint_id: string;
  event_id: string;
  event_type: string;
  status: Generated<DeliveryStatus>;
  attempt_count: Generated<number>;
  next_attempt_at: Timestamp | null;
  single_attempt: Generated<boolean>;
  locked_until: Timestamp | null;
  lock_token: string | null;
  created_at: DefaultTimestamp;
  updated_at: DefaultTimestamp;
}

export interface WebhookAttemptsTable {
  id: Generated<string>;
  delivery_id: string;
  at: Timestamp;
  response_status: number | null;
  latency_ms: number;
  error: string | null;
}

export interface WebhooksTables {
  webhook_endpoints: WebhookEndpointsTable;
  webhook_events: WebhookEventsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
}
