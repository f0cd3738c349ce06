-- Support queries (one per conversation), their notes, the end users of chats, team
-- notifications and their per-member recipient rows. Written by the platform (chat,
-- deployments); read by the support-queries and team-notifications families.

-- End users of chats: a platform record per company and external id (the chat `user` field).
create table end_users (
  id uuid primary key default gen_random_uuid(),
  company_id uuid not null references companies (id) on delete cascade,
  external_id text not null,
  email text,
  name text not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (company_id, external_id)
);

create table support_queries (
  id uuid primary key default gen_random_uuid(),
  company_id uuid not null references companies (id) on delete cascade,
  user_id uuid not null references end_users (id) on delete cascade,
  agent_id uuid references agents (id) on delete set null,
  -- Deployments and conversations belong to other modules; kept as plain ids (no FK) so that
  -- deleting them never rewrites support history.
  deployment_id uuid,
  conversation_id uuid,
  query_type text not null check (query_type in ('bug_report', 'feature_request', 'general_inquiry', 'technical_support', 'billing', 'account')),
  status text not null default 'open' check (status in ('open', 'in_progress', 'resolved', 'closed')),
  priority text not null check (priority in ('low', 'medium', 'high', 'urgent')),
  subject text not null,
  description text not null,
  resolution text not null default '',
  agent_actions_count integer not null default 0,
  tools_used text[] not null default '{}',
  customer_satisfaction smallint check (customer_satisfaction between 1 and 5),
  resolution_method text check (resolution_method in ('automated', 'human')),
  escalated_to_human boolean not null default false,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  resolved_at timestamptz,
  closed_at timestamptz,
  check (resolved_at is null or resolved_at >= created_at)
);
create unique index support_queries_conversation_id_key on support_queries (conversation_id) where conversation_id is not null;
-- The list (newest first) and every window aggregate: an index-only scan over the window.
create index support_queries_company_created_idx on support_queries (company_id, created_at desc, id desc)
  include (status, query_type, priority, agent_id, escalated_to_human, resolved_at, customer_satisfaction);
-- Resolutions per period (analytics time series).
create index support_queries_company_resolved_idx on support_queries (company_id, resolved_at) where resolved_at is not null;
create index support_queries_company_status_idx on support_queries (company_id, status, created_at desc);
create index support_queries_company_type_idx on support_queries (company_id, query_type, created_at desc);
create index support_queries_company_priority_idx on support_queries (company_id, priority, created_at desc);
create index support_queries_agent_idx on support_queries (agent_id, created_at desc);
create index support_queries_user_idx on support_queries (user_id, created_at desc);

-- All-time performance of each agent, kept by the statement triggers on support_queries
-- (migration 0021) so that rendering an agent's performance_metrics never scans its history.
create table support_agent_metrics (
  company_id uuid not null references companies (id) on delete cascade,
  agent_id uuid not null references agents (id) on delete cascade,
  queries_handled bigint not null default 0,
  resolved_count bigint not null default 0,
  resolution_minutes_sum double precision not null default 0,
  agent_resolved_count bigint not null default 0,
  satisfaction_sum bigint not null default 0,
  satisfaction_count bigint not null default 0,
  primary key (agent_id)
);
create index support_agent_metrics_company_idx on support_agent_metrics (company_id);

create table support_notes (
  id uuid primary key default gen_random_uuid(),
  company_id uuid not null references companies (id) on delete cascade,
  query_id uuid not null references support_queries (id) on delete cascade,
  -- The team member who wrote it; null for notes written by an agent or the platform.
  user_id uuid references users (id) on delete set null,
  content text not null,
  is_internal boolean not null default true,
  created_at timestamptz not null default now()
);
create index support_notes_query_idx on support_notes (query_id, created_at, id);
create index support_notes_company_idx on support_notes (company_id);
create index support_notes_user_idx on support_notes (user_id);

create table notifications (
  id uuid primary key default gen_random_uuid(),
  company_id uuid not null references companies (id) on delete cascade,
  -- Null when an agent or the platform sent it.
  sender_id uuid references users (id) on delete set null,
  notification_type text not null check (notification_type in ('agent_action', 'email_sent', 'slack_message', 'api_call', 'tool_usage', 'system')),
  category text not null check (category in ('agent', 'deployment', 'security', 'user', 'billing', 'system')),
  priority text not null default 'medium' check (priority in ('low', 'medium', 'high', 'urgent')),
  title text not null,
  message text not null,
  metadata jsonb not null default '{}',
  action_url text,
  expires_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index notifications_company_created_idx on notifications (company_id, created_at desc, id desc);
create index notifications_company_type_idx on notifications (company_id, notification_type, created_at desc);
create index notifications_company_agent_idx on notifications (company_id, (metadata ->> 'agent_id')) where metadata ? 'agent_id';
create index notifications_company_query_idx on notifications (company_id, (metadata ->> 'query_id')) where metadata ? 'query_id';
create index notifications_sender_idx on notifications (sender_id);

-- One row per member of the company at creation time: that member's read status.
create table notification_recipients (
  id uuid primary key default gen_random_uuid(),
  notification_id uuid not null references notifications (id) on delete cascade,
  company_id uuid not null references companies (id) on delete cascade,
  user_id uuid not null references users (id) on delete cascade,
  status text not null default 'unread' check (status in ('unread', 'read', 'archived')),
  read_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (notification_id, user_id)
);
create index notification_recipients_user_idx on notification_recipients (user_id, company_id, status, created_at desc);
create index notification_recipients_company_idx on notification_recipients (company_id);
