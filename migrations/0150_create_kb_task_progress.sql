-- How far a document's ingestion has got (stage: extracting, ocr, parsing, chunking, embedding,
-- indexing, crawling; done of total pages, rows, slides or pages crawled), written by the worker
-- that holds the task at most about once a second. Kept apart from kb_documents so that progress
-- writes neither rewrite the document row nor clear the company's cached lists (0014, 0094).
-- task_id says which run of the document the figures belong to; an older run's row is not shown.
create table kb_task_progress (
  document_id uuid primary key references kb_documents (id) on delete cascade,
  task_id uuid not null,
  stage text not null,
  done integer not null,
  total integer,
  updated_at timestamptz not null default now()
);
