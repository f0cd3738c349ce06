-- Deployments of agents (or workflows) to a channel and region, and their logs.
-- agent_id has no foreign key on purpose: a deployment outlives the agent it named, and the
-- roll-out reports "agent no longer exists" instead of the row vanishing with the agent.
create table deployments (
  id uuid primary key default gen_random_uuid(),
  company_id uuid not null references companies (id) on delete cascade,
  user_id uuid references users (id) on delete set null,
  deployable_type text not null check (deployable_type in ('agent', 'workflow')),
  deployable_id uuid not null,
  agent_id uuid not null,
  channel text not null,
  region_id uuid not null references regions (id),
  languages text not null default '',
  status text not null default 'pending'
    check (status in ('pending', 'deploying', 'active', 'failed', 'cancelled', 'paused')),
  config text not null default '{}',
  error text,
  -- Bumped by every start; a roll-out job only finishes the attempt it was sent for.
  rollout_attempt integer not null default 0,
  started_by uuid references users (id) on delete set null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index deployments_company_created_idx on deployments (company_id, created_at desc, id desc);
create index deployments_company_status_idx on deployments (company_id, status, created_at desc);
create index deployments_agent_idx on deployments (agent_id);
create index deployments_region_idx on deployments (region_id);
create index deployments_user_idx on deployments (user_id);
create index deployments_started_by_idx on deployments (started_by);
-- At most one live deployment per agent, channel and region: chat resolves agent_key to it.
create unique index deployments_live_key on deployments (agent_id, channel, region_id)
  where status in ('deploying', 'active', 'paused');

create table deployment_logs (
  id bigint generated always as identity primary key,
  deployment_id uuid not null references deployments (id) on delete cascade,
  level text not null check (level in ('info', 'warning', 'error')),
  message text not null,
  -- Millisecond precision, the precision of the timestamps the API prints and accepts in `since`.
  created_at timestamptz not null default date_trunc('milliseconds', clock_timestamp())
);
create index deployment_logs_deployment_idx on deployment_logs (deployment_id, created_at, id);
