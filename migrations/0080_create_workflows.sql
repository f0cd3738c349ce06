-- Workflows: several agents of a company behind one chat key. Each turn a router (rules, or a
-- language model) picks the step whose agent answers. Steps are kept as one JSON list (1–20,
-- validated by the service): they are read and written whole, never queried one by one.
-- default_agent_id has no foreign key, like deployments.agent_id: a deleted agent makes the
-- workflow's roll-out fail with the reason instead of the workflow vanishing with it.
create table workflows (
  id uuid primary key default gen_random_uuid(),
  company_id uuid not null references companies (id) on delete cascade,
  name text not null,
  description text not null default '',
  steps jsonb not null default '[]',
  default_agent_id uuid not null,
  router text not null default 'rules',
  created_by uuid references users (id) on delete set null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index workflows_company_created_idx on workflows (company_id, created_at desc, id desc);
create index workflows_created_by_idx on workflows (created_by);

-- Chat turns read workflows from the serving cache too (migration 0041).
create trigger workflows_serving_changed after update or delete on workflows
  for each statement execute function notify_change('switchboard_serving_changed');

-- A conversation reached through a workflow key names the workflow; its agent_id is the agent
-- answering now (a hand-off moves it). Each answer names the agent that wrote it.
alter table conversations add column workflow_id uuid;
alter table conversation_messages add column agent_id uuid;
-- An answer is written after its turn's hand-off moved the conversation, so the conversation's
-- agent at insert time is the agent that answered: recorded here for every answer, whatever
-- wrote it (one primary-key read per answer).
create function conversation_message_agent() returns trigger language plpgsql as $$
begin
  if new.role = 'assistant' and new.agent_id is null then
    select agent_id into new.agent_id from conversations where id = new.conversation_id;
  end if;
  return new;
end $$;
create trigger conversation_messages_agent before insert on conversation_messages
  for each row execute function conversation_message_agent();

-- The live key is the deployed thing (agent or workflow), not the agent: a workflow and its
-- default agent may each be live on the same channel and region. For agents the two are equal.
drop index deployments_live_key;
create unique index deployments_live_key on deployments (deployable_id, channel, region_id)
  where status in ('deploying', 'active', 'paused');
