-- The check value of the key that encrypts integration secrets (AES-256-GCM, SECRET_KEY or
-- DATA_DIR/secret.key): one row holding a known text sealed with that key. Each start opens it,
-- so a start with another key fails at once instead of failing, or answering garbage, later.
create table secret_key_check (
  id boolean primary key default true check (id),
  sealed text not null,
  created_at timestamptz not null default now()
);
