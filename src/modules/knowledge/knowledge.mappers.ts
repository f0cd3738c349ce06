/** The knowledge base's rows as the API shows them (collections, documents, tasks). */
import type * as repo from './knowledge.repo.js';
import type * as S from './knowledge.schemas.js';

const withPrefix = (prefix: string, id: string) => `${prefix}${id}`;

export function toCollection(row: repo.CollectionRow): S.Collection {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    is_private: row.is_private,
    company_id: row.company_id,
    created_by_id: row.created_by,
    vector_namespace: `kb:${row.company_id}:${row.id}`,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    document_count: row.document_count,
  };
}

/** A document's questions as stored: trimmed, blanks and repeats left out, in the order given. */
export const questionList = (questions: string[]) =>
  [...new Set(questions.map((question) => question.trim()))].filter(Boolean);

export function toDocument(row: repo.DocumentRow, content?: string): S.Document {
  return {
    id: withPrefix('doc_', row.id),
    title: row.title,
    categories: row.categories,
    questions: row.questions,
    collection_id: row.collection_id,
    company_id: row.company_id,
    source_type: row.source_type,
    source_url: row.source_url,
    file_name: row.file_name,
    mime_type: row.mime_type,
    size_bytes: row.size_bytes,
    language: row.language,
    task_id: withPrefix('task_', row.task_id),
    status: row.status,
    error: row.error,
    chunk_count: row.chunk_count,
    embedding_status: row.embedding_status,
    embedding_error: row.embedding_error,
    ocr_pages: row.ocr_pages,
    ocr_confidence: row.ocr_confidence,
    created_by_id: row.created_by,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    completed_at: row.completed_at?.toISOString() ?? null,
    ...(content !== undefined ? { content } : {}),
  };
}

export function toTask(row: repo.DocumentRow, progress: S.Task['progress'] | undefined): S.Task {
  return {
    task_id: withPrefix('task_', row.task_id),
    document_id: withPrefix('doc_', row.id),
    status: row.status,
    error: row.error,
    embedding_status: row.embedding_status,
    embedding_error: row.embedding_error,
    chunk_count: row.chunk_count,
    progress: progress ?? null,
    created_at: row.created_at.toISOString(),
    completed_at: row.completed_at?.toISOString() ?? null,
  };
}
