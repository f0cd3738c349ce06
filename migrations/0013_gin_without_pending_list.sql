-- With GIN's fast update, entries of new documents wait in a pending list that every query
-- scans until (auto)vacuum merges it: right after a bulk ingestion of SciFact's 5k documents the
-- docstore lane's phrase lookup took 15–22 ms through the index (the planner fell back to a
-- sequential scan) against 0.1 ms once merged. Searches matter more than insert speed here, so
-- entries go straight into the index; what is already pending is merged now.
alter index kb_documents_tsv_idx set (fastupdate = off);
alter index kb_documents_title_trgm_idx set (fastupdate = off);
alter index kb_documents_categories_idx set (fastupdate = off);
select gin_clean_pending_list('kb_documents_tsv_idx'::regclass);
select gin_clean_pending_list('kb_documents_title_trgm_idx'::regclass);
select gin_clean_pending_list('kb_documents_categories_idx'::regclass);
