-- The web widget (DESIGN §12). A `web` deployment's publishable key (`pk_…`, not a secret: it
-- sits in the company's web pages) is made on first read and replaced by a rotation, which stops
-- the old key at once on every instance: the key's row change is heard like a deployment's
-- (switchboard_serving_changed, migration 0041) and clears the cached keys.
create table widget_keys (
  deployment_id uuid primary key references deployments (id) on delete cascade,
  company_id uuid not null references companies (id) on delete cascade,
  key text not null unique check (key ~ '^pk_[A-Za-z0-9_-]{20,64}$'),
  created_at timestamptz not null default now(),
  rotated_at timestamptz
);
create index widget_keys_company on widget_keys (company_id);

create trigger widget_keys_serving_changed after insert or update or delete on widget_keys
  for each statement execute function notify_change('switchboard_serving_changed');

-- Which widget visitor a conversation belongs to: a visitor reads, continues and rates only its
-- own. Written when the widget starts a conversation, before the turn's conversation row (which
-- the chat turn writes behind its reply), hence no foreign key to conversations; the company's
-- and the deployment's deletion take the rows with them.
create table widget_conversations (
  conversation_id uuid primary key,
  company_id uuid not null references companies (id) on delete cascade,
  deployment_id uuid not null references deployments (id) on delete cascade,
  visitor_id uuid not null,
  created_at timestamptz not null default now()
);
create index widget_conversations_visitor on widget_conversations (deployment_id, visitor_id, created_at desc);
create index widget_conversations_company on widget_conversations (company_id);
