-- A chat turn in progress, written before the model, a tool or a voice step starts (the
-- customer's question is durable from then on) and deleted with the turn's records. A row whose
-- process died mid-turn (its owner's heartbeat stopped) is turned by the next start or a periodic
-- sweep into a failed turn: the question kept, the answer marked failed, the support query opened.
create table chat_turn_owners (
  id uuid primary key,
  seen_at timestamptz not null default now()
);

create table chat_pending_turns (
  -- The turn's id, also the id of its answer message.
  id uuid primary key,
  company_id uuid not null references companies (id) on delete cascade,
  conversation_id uuid not null references conversations (id) on delete cascade,
  agent_id uuid not null,
  deployment_id uuid,
  query text not null,
  owner uuid not null,
  started_at timestamptz not null default now()
);
create index chat_pending_turns_owner_idx on chat_pending_turns (owner);
create index chat_pending_turns_company_idx on chat_pending_turns (company_id);
create index chat_pending_turns_conversation_idx on chat_pending_turns (conversation_id);
