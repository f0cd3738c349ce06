-- Tenancy and identity: companies, users, memberships, invitations, credentials, outbox.
create extension if not exists pgcrypto;

create table companies (
  id uuid primary key default gen_random_uuid(),
  name text not null,
  industry text,
  contact_email text,
  contact_phone text,
  address text,
  website text,
  working_hours text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);

create table users (
  id uuid primary key default gen_random_uuid(),
  email text not null,
  first_name text not null default '',
  last_name text not null default '',
  active_company_id uuid references companies (id) on delete set null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create unique index users_email_key on users (lower(email));
create index users_active_company_id_idx on users (active_company_id);

create table company_members (
  id uuid primary key default gen_random_uuid(),
  company_id uuid not null references companies (id) on delete cascade,
  user_id uuid not null references users (id) on delete cascade,
  role text not null default 'member' check (role in ('owner', 'admin', 'developer', 'member')),
  joined_at timestamptz not null default now(),
  unique (company_id, user_id)
);
create index company_members_user_id_idx on company_members (user_id);

create table company_invitations (
  id uuid primary key default gen_random_uuid(),
  company_id uuid not null references companies (id) on delete cascade,
  email text not null,
  role text not null check (role in ('owner', 'admin', 'developer', 'member')),
  message text not null default '',
  status text not null default 'pending' check (status in ('pending', 'accepted', 'expired', 'revoked')),
  token_hash bytea not null unique,
  token_hint text not null,
  invited_by uuid references users (id) on delete set null,
  accepted_by uuid references users (id) on delete set null,
  accepted_at timestamptz,
  expires_at timestamptz not null,
  created_at timestamptz not null default now()
);
create index company_invitations_company_id_idx on company_invitations (company_id, status);
create unique index company_invitations_pending_email_key
  on company_invitations (company_id, lower(email)) where status = 'pending';
create index company_invitations_invited_by_idx on company_invitations (invited_by);
create index company_invitations_accepted_by_idx on company_invitations (accepted_by);

create table api_keys (
  id uuid primary key default gen_random_uuid(),
  user_id uuid not null references users (id) on delete cascade,
  name text not null default '',
  key_hash bytea not null unique,
  key_hint text not null,
  created_at timestamptz not null default now(),
  revoked_at timestamptz
);
create index api_keys_user_id_idx on api_keys (user_id);

create table regions (
  id uuid primary key,
  slug text not null unique,
  name text not null,
  created_at timestamptz not null default now()
);
insert into regions (id, slug, name) values
  ('6f1c1f5e-0d0b-4c1e-9a51-1a0000000001', 'us-east', 'US East'),
  ('6f1c1f5e-0d0b-4c1e-9a51-1a0000000002', 'us-west', 'US West'),
  ('6f1c1f5e-0d0b-4c1e-9a51-1a0000000003', 'eu-west', 'EU West'),
  ('6f1c1f5e-0d0b-4c1e-9a51-1a0000000004', 'me-central', 'Middle East Central'),
  ('6f1c1f5e-0d0b-4c1e-9a51-1a0000000005', 'ap-southeast', 'Asia Pacific Southeast');

create table agents (
  id uuid primary key default gen_random_uuid(),
  company_id uuid not null references companies (id) on delete cascade,
  title text not null,
  task_description text not null default '',
  instructions text not null default '',
  model text not null default 'builtin:kb',
  temperature double precision not null default 0.7,
  collection_ids uuid[] not null default '{}',
  integration_ids uuid[] not null default '{}',
  languages text not null default 'en',
  welcome_message text not null default '',
  escalation jsonb not null default '{}',
  created_by uuid references users (id) on delete set null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index agents_company_id_idx on agents (company_id, created_at desc);
create index agents_created_by_idx on agents (created_by);

create table chat_tokens (
  id uuid primary key default gen_random_uuid(),
  company_id uuid not null references companies (id) on delete cascade,
  agent_id uuid references agents (id) on delete cascade,
  name text not null default '',
  token_hash bytea not null unique,
  token_hint text not null,
  created_by uuid references users (id) on delete set null,
  created_at timestamptz not null default now(),
  revoked_at timestamptz
);
create index chat_tokens_company_id_idx on chat_tokens (company_id);
create index chat_tokens_agent_id_idx on chat_tokens (agent_id);
create index chat_tokens_created_by_idx on chat_tokens (created_by);

-- Mail that could not be (or is not configured to be) sent over SMTP.
create table email_outbox (
  id uuid primary key default gen_random_uuid(),
  company_id uuid references companies (id) on delete cascade,
  recipient text not null,
  subject text not null,
  body_text text not null,
  kind text not null,
  error text,
  created_at timestamptz not null default now()
);
create index email_outbox_company_id_idx on email_outbox (company_id, created_at desc);
