/** Table types of the knowledge base (migrations/0010_create_knowledge.sql). */
import type { Generated } from 'kysely';
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

export interface KnowledgeTables {
  kb_collections: KbCollectionsTable;
  kb_documents: KbDocumentsTable;
  kb_chunks: KbChunksTable;
  kb_postings: KbPostingsTable;
  kb_corpus_stats: KbCorpusStatsTable;
  kb_task_progress: KbTaskProgressTable;
}
