-- Integrations of a company with third-party platforms (the integrations family's record).
-- Agents reference them; deployments check that they are active before a roll-out.
create table integrations (
  id uuid primary key default gen_random_uuid(),
  company_id uuid not null references companies (id) on delete cascade,
  name text not null,
  type text not null,
  config jsonb not null default '{}',
  is_active boolean not null default true,
  visibility text not null default 'private' check (visibility in ('private', 'public')),
  agent_id uuid references agents (id) on delete set null,
  created_by uuid references users (id) on delete set null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index integrations_company_id_idx on integrations (company_id, created_at desc);
create index integrations_agent_id_idx on integrations (agent_id);
create index integrations_created_by_idx on integrations (created_by);
