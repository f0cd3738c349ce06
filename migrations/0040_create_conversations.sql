-- Chat: conversations between an end user and an agent, their messages (with the citations of
-- the knowledge they were answered from) and the end user's feedback (1–5) on a conversation.
-- deployment_id, end_user_id and support_query_id point at tables of other modules; they are
-- kept as plain ids so that this module's migration does not depend on theirs.
create table conversations (
  id uuid primary key default gen_random_uuid(),
  company_id uuid not null references companies (id) on delete cascade,
  agent_id uuid not null references agents (id) on delete cascade,
  deployment_id uuid,
  chat_token_id uuid references chat_tokens (id) on delete set null,
  title text not null default '',
  status text not null default 'open' check (status in ('open', 'closed')),
  external_user_id text,
  end_user_id uuid,
  support_query_id uuid,
  channel text,
  region text,
  message_count integer not null default 0,
  last_message_at timestamptz,
  closed_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index conversations_company_idx on conversations (company_id, created_at desc, id desc);
create index conversations_company_agent_idx on conversations (company_id, agent_id, created_at desc);
create index conversations_company_user_idx on conversations (company_id, external_user_id, created_at desc);
create index conversations_agent_id_idx on conversations (agent_id);
create index conversations_chat_token_id_idx on conversations (chat_token_id);

create table conversation_messages (
  id uuid primary key default gen_random_uuid(),
  -- Monotonic order within the database: the cursor of message pagination.
  seq bigint generated always as identity,
  company_id uuid not null references companies (id) on delete cascade,
  conversation_id uuid not null references conversations (id) on delete cascade,
  role text not null check (role in ('user', 'assistant')),
  content text not null,
  citations jsonb not null default '[]',
  model text,
  was_resolved boolean,
  response_time_ms integer,
  finish_reason text check (finish_reason in ('stop', 'aborted', 'error')),
  created_at timestamptz not null default now()
);
create unique index conversation_messages_seq_key on conversation_messages (conversation_id, seq);
create index conversation_messages_company_id_idx on conversation_messages (company_id);

create table conversation_feedback (
  id uuid primary key default gen_random_uuid(),
  company_id uuid not null references companies (id) on delete cascade,
  conversation_id uuid not null unique references conversations (id) on delete cascade,
  rating smallint not null check (rating between 1 and 5),
  comment text not null default '',
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index conversation_feedback_company_id_idx on conversation_feedback (company_id);
