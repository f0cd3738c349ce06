-- Channels (DESIGN §12): a deployment on Slack, WhatsApp or Teams answers customers there.
--
-- channel_threads: one row per vendor thread of a deployment (Slack channel + thread root,
-- WhatsApp sender number, Teams conversation id): the conversation that answers it, and where
-- replies go (`reply_to`: the vendor's addressing, never a secret). A thread's events are worked
-- one at a time and in order: claiming or finishing one locks its thread row first.
--
-- channel_events: one customer message (or a bot-added greeting) accepted from a vendor, the task
-- its answering job works (`worker_id`: the worker process holding it, as deployments' roll-outs
-- do; a dead worker's events go back to the queue). `answer` keeps the reply between the turn and
-- its delivery, so a crash after the turn re-sends it without a second turn.
--
-- channel_event_keys: the vendor's ids of what was accepted (Slack event_id and channel:ts, Meta
-- message ids, Bot Framework activity ids), unique per deployment, so a retry or a double
-- delivery — on any instance, after any crash — is one turn. Kept two days (deleted by age).
--
-- channel_notices: when a deployment last logged a throttled line (paused, refusals), so that
-- every instance together writes at most one per period.
create table channel_threads (
  deployment_id uuid not null references deployments (id) on delete cascade,
  thread_key text not null,
  company_id uuid not null references companies (id) on delete cascade,
  channel text not null,
  conversation_id uuid references conversations (id) on delete set null,
  reply_to jsonb not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (deployment_id, thread_key)
);
create unique index channel_threads_conversation_idx on channel_threads (conversation_id);

create table channel_events (
  id uuid primary key default gen_random_uuid(),
  deployment_id uuid not null,
  thread_key text not null,
  company_id uuid not null references companies (id) on delete cascade,
  kind text not null check (kind in ('message', 'welcome')),
  input jsonb not null,
  state text not null default 'queued' check (state in ('queued', 'answered', 'done')),
  attempts integer not null default 0,
  worker_id integer,
  answer jsonb,
  error text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  foreign key (deployment_id, thread_key) references channel_threads (deployment_id, thread_key) on delete cascade
);
create index channel_events_thread_idx on channel_events (deployment_id, thread_key, created_at)
  where state <> 'done';
create index channel_events_worker_idx on channel_events (worker_id) where worker_id is not null;
create index channel_events_done_idx on channel_events (updated_at) where state = 'done';
create index channel_events_company_idx on channel_events (company_id);

create table channel_event_keys (
  deployment_id uuid not null references deployments (id) on delete cascade,
  key text not null,
  created_at timestamptz not null default now(),
  primary key (deployment_id, key)
);
create index channel_event_keys_age_idx on channel_event_keys (created_at);

create table channel_notices (
  deployment_id uuid not null references deployments (id) on delete cascade,
  kind text not null,
  last_at timestamptz not null,
  primary key (deployment_id, kind)
);
