-- Sign-in for people: a password per user (scrypt, PHC string), failed attempts and the lock-out
-- they earn, sessions behind a cookie (only the SHA-256 of the session id is stored), and
-- single-use links that set a password (reset by e-mail, the bootstrap owner's first sign-in).
create table user_passwords (
  user_id uuid primary key references users (id) on delete cascade,
  password_hash text not null,
  failed_attempts integer not null default 0,
  locked_until timestamptz,
  changed_at timestamptz not null default now()
);

create table user_sessions (
  id uuid primary key default gen_random_uuid(),
  user_id uuid not null references users (id) on delete cascade,
  id_hash bytea not null unique,
  user_agent text not null default '',
  created_at timestamptz not null default now(),
  last_seen_at timestamptz not null default now(),
  expires_at timestamptz not null,
  revoked_at timestamptz
);
create index user_sessions_user_id_idx on user_sessions (user_id) where revoked_at is null;

create table password_links (
  id uuid primary key default gen_random_uuid(),
  user_id uuid not null references users (id) on delete cascade,
  purpose text not null check (purpose in ('reset', 'first_sign_in')),
  token_hash bytea not null unique,
  expires_at timestamptz not null,
  used_at timestamptz,
  created_at timestamptz not null default now()
);
create index password_links_user_id_idx on password_links (user_id) where used_at is null;

