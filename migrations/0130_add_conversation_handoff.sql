-- Hand-off to a person (DESIGN §13). Who answers an open conversation: the agent (`bot`), nobody
-- yet (`handoff`: waiting for a person, `handoff_reason` says why) or a person (`assigned`,
-- `assignee_id`); a closed conversation is `closed` whatever it was. A person's messages are
-- `human`, with their author and how their delivery on the conversation's channel went.
alter table conversations
  add column handler text not null default 'bot' check (handler in ('bot', 'handoff', 'assigned')),
  add column assignee_id uuid references users (id) on delete set null,
  add column handoff_reason text,
  add column handoff_at timestamptz;
-- The inbox's lists (newest first per company and state); `handler` changes rarely, so turns that
-- move the counters stay heap-only updates.
create index conversations_inbox_idx on conversations (company_id, handler, created_at desc, id desc);
create index conversations_assignee_idx on conversations (assignee_id, created_at desc)
  where assignee_id is not null;

alter table conversation_messages drop constraint conversation_messages_role_check;
alter table conversation_messages
  add constraint conversation_messages_role_check check (role in ('user', 'assistant', 'human')) not valid;
alter table conversation_messages validate constraint conversation_messages_role_check;
alter table conversation_messages
  add column author_id uuid references users (id) on delete set null,
  add column delivery_status text check (delivery_status in ('pending', 'delivered', 'failed')),
  add column delivery_error text;
create index conversation_messages_author_idx on conversation_messages (author_id) where author_id is not null;

-- The person who resolved a query handed to the team (null: the agent, or nobody yet).
alter table support_queries add column resolved_by uuid references users (id) on delete set null;
create index support_queries_resolved_by_idx on support_queries (resolved_by) where resolved_by is not null;
