-- Voice agents (DESIGN §9): a voice and its settings for a company's main agent.
-- main_agent_id: deleting the agent unlinks it (set null) rather than deleting the voice agent;
-- a voice agent without a main agent keeps its voice and settings and cannot answer until relinked.
create table voice_agents (
  id uuid primary key default gen_random_uuid(),
  company_id uuid not null references companies (id) on delete cascade,
  name text not null check (char_length(name) between 1 and 200),
  description text not null default '' check (char_length(description) <= 2000),
  voice_id text not null check (char_length(voice_id) between 1 and 100),
  voice_name text not null default '' check (char_length(voice_name) <= 200),
  language text not null default 'en' check (char_length(language) between 2 and 3),
  model_id text not null default 'eleven_turbo_v2_5' check (char_length(model_id) between 1 and 100),
  active boolean not null default false,
  temperature double precision not null default 0.7 check (temperature between 0 and 1),
  voice_speed double precision not null default 100 check (voice_speed between 50 and 200),
  voice_stability double precision not null default 0.5 check (voice_stability between 0 and 1),
  voice_similarity_boost double precision not null default 0.5
    check (voice_similarity_boost between 0 and 1),
  voice_style double precision not null default 0 check (voice_style between 0 and 1),
  output_format text not null default 'mp3_44100_128' check (output_format ~ '^(mp3|pcm|ulaw|alaw|wav)_[0-9]+(_[0-9]+)?$'),
  main_agent_id uuid references agents (id) on delete set null,
  created_by uuid references users (id) on delete set null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index voice_agents_company_created_idx on voice_agents (company_id, created_at, id);
create index voice_agents_main_agent_idx on voice_agents (main_agent_id);
create index voice_agents_created_by_idx on voice_agents (created_by);
