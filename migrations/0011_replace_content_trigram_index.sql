-- The docstore lane measured whole-document trigram word similarity at 0.6–3.7 s per query on
-- 5k documents (every candidate's full text is rechecked), so it matches phrases over whole
-- documents (tsvector, indexed) and trigrams over titles instead; the content trigram index
-- only slowed ingestion down.
drop index if exists kb_documents_content_trgm_idx;
create index kb_documents_title_trgm_idx on kb_documents using gin (title gin_trgm_ops);
