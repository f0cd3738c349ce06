-- Outbound webhooks (DESIGN §14): a company's endpoints, the outbox of events, one delivery per
-- event and endpoint, and the attempts of each delivery.

create table webhook_endpoints (
  id uuid primary key default gen_random_uuid(),
  company_id uuid not null references companies (id) on delete cascade,
  url text not null,
  description text not null default '',
  events text[] not null,
  enabled boolean not null default true,
  -- Why the platform disabled it (the whole retry schedule failed); null when enabled or disabled by a person.
  disabled_reason text,
  -- The signing secret (whsec_…), sealed with the secret box; the previous one keeps signing
  -- (a second signature) until previous_secret_expires_at after a rotation.
  secret text not null,
  previous_secret text,
  previous_secret_expires_at timestamptz,
  last_success_at timestamptz,
  created_by uuid references users (id) on delete set null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index webhook_endpoints_company_idx on webhook_endpoints (company_id, created_at desc);
create index webhook_endpoints_created_by_idx on webhook_endpoints (created_by);

-- The outbox: written by triggers in the transaction of the change (only for a company with an
-- enabled endpoint subscribed to the type), rendered and fanned out to deliveries by a worker.
create table webhook_events (
  id uuid primary key default gen_random_uuid(),
  company_id uuid not null references companies (id) on delete cascade,
  type text not null,
  resource_id uuid not null,
  occurred_at timestamptz not null default clock_timestamp(),
  -- The body sent, {type, timestamp, data}, fixed when the event is fanned out.
  payload text,
  dispatched_at timestamptz
);
create index webhook_events_undispatched_idx on webhook_events (occurred_at) where dispatched_at is null;
create index webhook_events_company_idx on webhook_events (company_id, occurred_at);
create index webhook_events_occurred_idx on webhook_events (occurred_at);

create table webhook_deliveries (
  -- Also the `webhook-id` header: the same on every attempt and on a manual retry.
  id uuid primary key default gen_random_uuid(),
  company_id uuid not null references companies (id) on delete cascade,
  endpoint_id uuid not null references webhook_endpoints (id) on delete cascade,
  event_id uuid not null references webhook_events (id) on delete cascade,
  event_type text not null,
  status text not null default 'pending' check (status in ('pending', 'succeeded', 'failed')),
  attempt_count integer not null default 0,
  next_attempt_at timestamptz,
  -- A manual retry or a test: one attempt, no schedule.
  single_attempt boolean not null default false,
  -- The lease of the worker sending it: another may take it once the lease has run out.
  locked_until timestamptz,
  lock_token uuid,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index webhook_deliveries_endpoint_idx on webhook_deliveries (endpoint_id, created_at desc, id desc);
create index webhook_deliveries_due_idx on webhook_deliveries (next_attempt_at) where status = 'pending';
create index webhook_deliveries_pending_endpoint_idx on webhook_deliveries (endpoint_id) where status = 'pending';
create index webhook_deliveries_event_idx on webhook_deliveries (event_id);
create index webhook_deliveries_company_idx on webhook_deliveries (company_id);

create table webhook_attempts (
  id bigint generated always as identity primary key,
  delivery_id uuid not null references webhook_deliveries (id) on delete cascade,
  at timestamptz not null,
  response_status integer,
  latency_ms integer not null,
  error text
);
create index webhook_attempts_delivery_idx on webhook_attempts (delivery_id, id);

-- A worker waiting for events is woken by this (and polls besides).
create function webhook_events_notify() returns trigger language plpgsql as $$
begin
  perform pg_notify('switchboard_webhook_events', '');
  return null;
end $$;
create trigger webhook_events_notify after insert on webhook_events
  for each statement execute function webhook_events_notify();

-- Whether the company has an enabled endpoint subscribed to the event type.
create function webhook_subscribed(company uuid, event_type text) returns boolean
language sql stable as $$
  select exists (
    select 1 from webhook_endpoints e where e.company_id = company and e.enabled and event_type = any (e.events)
  )
$$;

-- The events, recorded by triggers so that every write path records them in its own
-- transaction (the chat turn writes its support query in one statement). Inserts are recorded
-- per statement (bulk writes such as the demo seeder's check once); updates per row, behind a
-- WHEN condition that costs nothing when the row did not change in the way the event names.
create function webhook_record_inserts() returns trigger language plpgsql as $$
begin
  insert into webhook_events (company_id, type, resource_id)
  select n.company_id, tg_argv[0], n.id from new_rows n
  where webhook_subscribed(n.company_id, tg_argv[0]);
  return null;
end $$;

-- tg_argv[0]: the event type.
create function webhook_record_update() returns trigger language plpgsql as $$
begin
  if webhook_subscribed(new.company_id, tg_argv[0]) then
    insert into webhook_events (company_id, type, resource_id) values (new.company_id, tg_argv[0], new.id);
  end if;
  return null;
end $$;

create trigger support_queries_webhook_insert after insert on support_queries
  referencing new table as new_rows for each statement execute function webhook_record_inserts('support_query.created');
create trigger support_queries_webhook_resolved after update on support_queries
  for each row when (new.status = 'resolved' and old.status is distinct from new.status)
  execute function webhook_record_update('support_query.resolved');
create trigger support_queries_webhook_updated after update on support_queries
  for each row when (old.* is distinct from new.* and not (new.status = 'resolved' and old.status is distinct from new.status))
  execute function webhook_record_update('support_query.updated');

create trigger notifications_webhook_insert after insert on notifications
  referencing new table as new_rows for each statement execute function webhook_record_inserts('notification.created');

create trigger deployments_webhook_update after update of status on deployments
  for each row when (old.status is distinct from new.status)
  execute function webhook_record_update('deployment.status_changed');

create trigger kb_documents_webhook_ingested after update of status on kb_documents
  for each row when (new.status = 'completed' and old.status is distinct from new.status)
  execute function webhook_record_update('document.ingested');
create trigger kb_documents_webhook_failed after update of status on kb_documents
  for each row when (new.status = 'failed' and old.status is distinct from new.status)
  execute function webhook_record_update('document.failed');
