/** Table types of the knowledge base (migrations/0010_create_knowledge.sql). */
import type { ColumnType, Generated } from 'kysely';
import type { DefaultTimestamp, Timestamp } from '../../db/columns.js';

export type TaskStatus = 'pending' | 'processing' | 'completed' | 'failed';
export type EmbeddingStatus = 'pending' | 'completed' | 'unavailable';
export type SourceType = 'file' | 'article' | 'website';

export interface KbCollectionsTable {
  id: Generated<string>;
  company_id: string;
  name: string;
  description: Generated<string>;
  is_private: Generated<boolean>;
  created_by: string | null;
  created_at: DefaultTimestamp;
  updated_at: DefaultTimestamp;
}

export interface KbDocumentsTable {
  id: Generated<string>;
  company_id: string;
  collection_id: string | null;
  title: string;
  categories: Generated<string[]>;
  questions: Generated<string[]>;
  source_type: SourceType;
  source_url: string | null;
  file_name: string | null;
  mime_type: string | null;
  size_bytes: Generated<number>;
  source_bytes: Buffer | null;
  content: Generated<string>;
  content_tsv: string | null;
  language: string | null;
  task_id: Generated<string>;
  status: Generated<TaskStatus>;
  error: string | null;
  attempt: Generated<number>;
  chunk_count: Generated<number>;
  embedding_status: Generated<EmbeddingStatus>;
  embedding_error: string | null;
  embedding_model: string | null;
  created_by: string | null;
  created_at: DefaultTimestamp;
  updated_at: DefaultTimestamp;
  processing_started_at: Timestamp | null;
  /** The worker process (job_workers.id) that owns the task while it is processing. */
  worker_id: number | null;
  completed_at: Timestamp | null;
  /** Pages read by OCR and their mean confidence (migration 0151); null without OCR. */
  ocr_pages: number | null;
  ocr_confidence: number | null;
}

/** How far a document's current ingestion has got (migration 0150). */
export interface KbTaskProgressTable {
  document_id: string;
  task_id: string;
  stage: string;
  done: number;
  total: number | null;
  updated_at: DefaultTimestamp;
}

export interface KbChunksTable {
  id: Generated<string>;
  company_id: string;
  document_id: string;
  collection_id: string | null;
  categories: string[];
  document_created_at: Timestamp;
  ordinal: number;
  text: string;
  language: string;
  tsv: string;
  token_count: number;
  embedding: Buffer | null;
  embedding_model: string | null;
}

export interface KbPostingsTable {
  company_id: string;
  lexeme: string;
  chunk_id: string;
  tf: number;
  dl: number;
}

export interface KbCorpusStatsTable {
  company_id: string;
  chunk_count: Generated<number>;
  token_total: Generated<number>;
  version: Generated<number>;
}

export interface CrawlFailure {
  url: string;
  error: string;
}

/** A website crawl into a collection (migration 0185). */
export interface KbCrawlsTable {
  id: Generated<string>;
  company_id: string;
  collection_id: string;
  start_url: string;
  max_pages: number;
  max_depth: number;
  include_patterns: Generated<string[]>;
  exclude_patterns: Generated<string[]>;
  categories: Generated<string[]>;
  status: Generated<TaskStatus>;
  error: string | null;
  attempt: Generated<number>;
  worker_id: number | null;
  stage: string | null;
  done: Generated<number>;
  total: number | null;
  pages_added: Generated<number>;
  pages_updated: Generated<number>;
  pages_unchanged: Generated<number>;
  pages_removed: Generated<number>;
  pages_failed: Generated<number>;
  pages_skipped: Generated<number>;
  failures: ColumnType<CrawlFailure[], string | undefined, string>;
  created_by: string | null;
  created_at: DefaultTimestamp;
  updated_at: DefaultTimestamp;
  started_at: Timestamp | null;
  completed_at: Timestamp | null;
}

/** A page a crawl keeps, with its document (migration 0185). */
export interface KbCrawlPagesTable {
  crawl_id: string;
  url: string;
  document_id: string;
  etag: string | null;
  last_modified: string | null;
  content_hash: string;
  links: Generated<string[]>;
  crawled_at: DefaultTimestamp;
}

export interface KnowledgeTables {
  kb_crawls: KbCrawlsTable;
  kb_crawl_pages: KbCrawlPagesTable;
  kb_collections: KbCollectionsTable;
  kb_documents: KbDocumentsTable;
  kb_chunks: KbChunksTable;
  kb_postings: KbPostingsTable;
  kb_corpus_stats: KbCorpusStatsTable;
  kb_task_progress: KbTaskProgressTable;
}
