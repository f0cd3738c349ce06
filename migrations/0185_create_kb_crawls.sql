-- Website crawls (knowledge.crawl.ts): a start URL crawled into a collection, each page a
-- document of it (source_type 'website', the fetched page kept in source_bytes until it is read).
-- A crawl is run again by posting the same start URL for the same collection: changed pages are
-- updated (ETag / Last-Modified answered 304, or the same content hash: unchanged), pages that
-- vanished are removed. Like a document's task, the crawl is owned by the worker that claimed
-- it (worker_id, attempt fence its writes) and handed back when that worker dies.
create table kb_crawls (
  id uuid primary key default gen_random_uuid(),
  company_id uuid not null references companies (id) on delete cascade,
  collection_id uuid not null references kb_collections (id) on delete cascade,
  start_url text not null,
  max_pages integer not null,
  max_depth integer not null,
  include_patterns text[] not null default '{}',
  exclude_patterns text[] not null default '{}',
  categories text[] not null default '{}',
  status text not null default 'pending' check (status in ('pending', 'processing', 'completed', 'failed')),
  error text,
  attempt integer not null default 0,
  worker_id integer,
  -- Progress: stage (robots, sitemap, crawling, removing), pages crawled of the pages known.
  stage text,
  done integer not null default 0,
  total integer,
  pages_added integer not null default 0,
  pages_updated integer not null default 0,
  pages_unchanged integer not null default 0,
  pages_removed integer not null default 0,
  pages_failed integer not null default 0,
  -- Pages refused by robots.txt, out of scope or filtered, or past max_pages / max_depth.
  pages_skipped integer not null default 0,
  -- The pages that could not be fetched (the last 20: url and reason).
  failures jsonb not null default '[]',
  created_by uuid references users (id) on delete set null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  started_at timestamptz,
  completed_at timestamptz
);
create unique index kb_crawls_collection_start_key on kb_crawls (collection_id, start_url);
create index kb_crawls_company_created_idx on kb_crawls (company_id, created_at desc);
create index kb_crawls_created_by_idx on kb_crawls (created_by);
create index kb_crawls_processing_worker_idx on kb_crawls (worker_id) where status = 'processing';
create index kb_crawls_unfinished_idx on kb_crawls (status) where status in ('pending', 'processing');

-- The pages a crawl keeps: the document of each, and what tells a change on the next run.
create table kb_crawl_pages (
  crawl_id uuid not null references kb_crawls (id) on delete cascade,
  url text not null,
  document_id uuid not null references kb_documents (id) on delete cascade,
  etag text,
  last_modified text,
  content_hash text not null,
  -- The page's links, followed again when the page answers 304 Not Modified.
  links text[] not null default '{}',
  crawled_at timestamptz not null default now(),
  primary key (crawl_id, url)
);
create index kb_crawl_pages_document_idx on kb_crawl_pages (document_id);
