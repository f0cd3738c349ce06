-- Knowledge base: collections, documents (each with its ingestion task), chunks, the postings
-- of the full-text lane (BM25) and per-company corpus statistics whose version keeps in-process
-- vector indexes coherent across instances.
create extension if not exists pg_trgm;

create table kb_collections (
  id uuid primary key default gen_random_uuid(),
  company_id uuid not null references companies (id) on delete cascade,
  name text not null,
  description text not null default '',
  is_private boolean not null default false,
  created_by uuid references users (id) on delete set null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create unique index kb_collections_company_name_key on kb_collections (company_id, lower(name));
create index kb_collections_company_created_idx on kb_collections (company_id, created_at desc);
create index kb_collections_created_by_idx on kb_collections (created_by);

create table kb_documents (
  id uuid primary key default gen_random_uuid(),
  company_id uuid not null references companies (id) on delete cascade,
  collection_id uuid references kb_collections (id) on delete set null,
  title text not null,
  categories text[] not null default '{}',
  source_type text not null check (source_type in ('file', 'article', 'website')),
  source_url text,
  file_name text,
  mime_type text,
  size_bytes integer not null default 0,
  -- The uploaded file until it is processed (cleared afterwards).
  source_bytes bytea,
  content text not null default '',
  content_tsv tsvector,
  language text,
  task_id uuid not null unique default gen_random_uuid(),
  status text not null default 'pending' check (status in ('pending', 'processing', 'completed', 'failed')),
  error text,
  -- Bumped each time a worker takes the task; a worker only commits the attempt it took.
  attempt integer not null default 0,
  chunk_count integer not null default 0,
  embedding_status text not null default 'pending' check (embedding_status in ('pending', 'completed', 'unavailable')),
  embedding_error text,
  embedding_model text,
  created_by uuid references users (id) on delete set null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  processing_started_at timestamptz,
  completed_at timestamptz
);
create index kb_documents_company_created_idx on kb_documents (company_id, created_at desc);
create index kb_documents_collection_idx on kb_documents (collection_id);
create index kb_documents_created_by_idx on kb_documents (created_by);
create index kb_documents_categories_idx on kb_documents using gin (categories);
create index kb_documents_unfinished_idx on kb_documents (status) where status in ('pending', 'processing');
create index kb_documents_tsv_idx on kb_documents using gin (content_tsv);
create index kb_documents_content_trgm_idx on kb_documents using gin (content gin_trgm_ops);

create table kb_chunks (
  id uuid primary key default gen_random_uuid(),
  company_id uuid not null references companies (id) on delete cascade,
  document_id uuid not null references kb_documents (id) on delete cascade,
  -- Copies of the document's filters, so that every lane filters without a join.
  collection_id uuid,
  categories text[] not null default '{}',
  document_created_at timestamptz not null,
  ordinal integer not null,
  text text not null,
  language text not null,
  tsv tsvector not null,
  token_count integer not null,
  -- Float32 little-endian, unit length (the vector lane reads these into an in-process index).
  embedding bytea,
  embedding_model text
);
create index kb_chunks_document_idx on kb_chunks (document_id, ordinal);
create index kb_chunks_company_idx on kb_chunks (company_id, collection_id);
create index kb_chunks_embedding_idx on kb_chunks (company_id, embedding_model) where embedding is not null;

-- One row per (chunk, lexeme): the inverted index of the full-text lane. BM25 needs term
-- frequency (tf), chunk length (dl) and document frequency (count of rows per lexeme).
-- Rows are removed with their chunks by the repository (the primary key serves that delete).
create table kb_postings (
  company_id uuid not null references companies (id) on delete cascade,
  lexeme text not null,
  chunk_id uuid not null,
  tf integer not null,
  dl integer not null,
  primary key (company_id, lexeme, chunk_id)
);

create table kb_corpus_stats (
  company_id uuid primary key references companies (id) on delete cascade,
  chunk_count bigint not null default 0,
  token_total bigint not null default 0,
  -- Bumped on every change of chunks or their filters; in-process indexes reload when it moves.
  version bigint not null default 0
);
