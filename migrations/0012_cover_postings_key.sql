-- BM25 reads every posting of the query's lexemes; with tf and dl in the key's index it reads
-- only the index (postings of one lexeme are adjacent there, scattered in the heap).
alter table kb_postings drop constraint kb_postings_pkey;
alter table kb_postings add primary key (company_id, lexeme, chunk_id) include (tf, dl);
