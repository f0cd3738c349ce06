/**
 * Wire schemas of the documents and collections families. Records the interface leaves unshaped
 * (document, search result, statistics, similarity) are decided here (DESIGN §6).
 */
import { Type, type Static } from '@sinclair/typebox';
import { IsoDate, Nullable, StringEnum, Timestamp, Uuid } from '../../http/schemas.js';

/** Bodies refuse unknown fields (a 400 naming them): ids, tenancy and timestamps are never input. */
const closed = { additionalProperties: false } as const;

const Categories = Type.Array(Type.String({ minLength: 1, maxLength: 100 }), {
  maxItems: 50,
  description: 'Category labels',
});

/** Alternative questions a document answers (FAQ mode): indexed with its title, read by the built-in responder. */
const Questions = Type.Array(Type.String({ minLength: 1, maxLength: 300 }), {
  maxItems: 20,
  description:
    "Questions the document answers, in customers' words (indexed with the title; up to 20 of 300 characters)",
});

/** `doc_<uuid>` or a bare UUID. */
export const DocumentId = Type.String({
  pattern: '^(doc_)?[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$',
  description: 'doc_<uuid> (a bare UUID is accepted)',
});
/** `task_<uuid>` or a bare UUID. */
export const TaskId = Type.String({
  pattern: '^(task_)?[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$',
  description: 'task_<uuid> (a bare UUID is accepted)',
});

export const TASK_STATUSES = ['pending', 'processing', 'completed', 'failed'] as const;

// ---------------------------------------------------------------- collections

export const Collection = Type.Object(
  {
    id: Uuid(),
    name: Type.String(),
    description: Type.String(),
    is_private: Type.Boolean(),
    company_id: Uuid(),
    created_by_id: Nullable(Uuid()),
    vector_namespace: Type.String({
      description: "Where the collection's vectors live: `kb:<company id>:<collection id>`",
    }),
    created_at: Timestamp(),
    updated_at: Timestamp(),
    document_count: Type.Integer(),
  },
  { $id: 'Collection' },
);
export type Collection = Static<typeof Collection>;

export const CreateCollectionBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    description: Type.Optional(Type.String({ maxLength: 5000 })),
    is_private: Type.Optional(Type.Boolean()),
    company_id: Uuid({ description: "Must be the caller's active company" }),
  },
  closed,
);
export type CreateCollectionBody = Static<typeof CreateCollectionBody>;

export const UpdateCollectionBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    description: Type.Optional(Type.String({ maxLength: 5000 })),
    is_private: Type.Optional(Type.Boolean()),
  },
  closed,
);
export type UpdateCollectionBody = Static<typeof UpdateCollectionBody>;

export const DeleteStatus = Type.Object({ status: Type.Literal('deleted') });

// ---------------------------------------------------------------- documents

export const Document = Type.Object(
  {
    id: Type.String({ description: 'doc_<uuid>' }),
    title: Type.String(),
    categories: Type.Array(Type.String()),
    questions: Type.Array(Type.String(), { description: 'Questions the document answers' }),
    collection_id: Nullable(Uuid()),
    company_id: Uuid(),
    source_type: StringEnum(['file', 'article', 'website'] as const),
    source_url: Nullable(Type.String()),
    file_name: Nullable(Type.String()),
    mime_type: Nullable(Type.String()),
    size_bytes: Type.Integer(),
    language: Nullable(Type.String({ description: 'ISO 639-1 code detected from the text (`und` when unknown)' })),
    task_id: Type.String({ description: 'task_<uuid>' }),
    status: StringEnum(TASK_STATUSES),
    error: Nullable(Type.String()),
    chunk_count: Type.Integer(),
    embedding_status: StringEnum(['pending', 'completed', 'unavailable'] as const),
    embedding_error: Nullable(Type.String()),
    ocr_pages: Nullable(
      Type.Integer({ description: 'Pages (or images) read by OCR; null when the file had a text layer' }),
    ),
    ocr_confidence: Nullable(
      Type.Number({ description: "Mean OCR confidence of the words read (0–100), tesseract's measure" }),
    ),
    created_by_id: Nullable(Uuid()),
    created_at: Timestamp(),
    updated_at: Timestamp(),
    completed_at: Nullable(Timestamp()),
    content: Type.Optional(Type.String({ description: 'The extracted text (get and update only)' })),
  },
  { $id: 'Document' },
);
export type Document = Static<typeof Document>;

export const DocumentPage = Type.Object({
  data: Type.Array(Type.Ref(Document)),
  total: Type.Integer(),
  page: Type.Integer(),
  limit: Type.Integer(),
});

export const ListDocumentsBody = Type.Object(
  {
    categories: Type.Optional(Categories),
    start_date: Type.Optional(IsoDate({ description: 'Created at or after' })),
    end_date: Type.Optional(IsoDate({ description: 'Created at or before' })),
    collection_id: Type.Optional(Uuid()),
    page: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000, default: 1 })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 10 })),
  },
  closed,
);
export type ListDocumentsBody = Static<typeof ListDocumentsBody>;

export const UploadResult = Type.Object({
  task_id: Type.String(),
  document_id: Type.String(),
  status: StringEnum(TASK_STATUSES),
});
export type UploadResult = Static<typeof UploadResult>;

export const UploadArticleBody = Type.Object(
  {
    content: Type.String({ minLength: 1 }),
    document_title: Type.String({ minLength: 1, maxLength: 500 }),
    categories: Type.Optional(Categories),
    questions: Type.Optional(Questions),
    collection_id: Type.Optional(Uuid()),
  },
  closed,
);
export type UploadArticleBody = Static<typeof UploadArticleBody>;

export const UploadWebsiteBody = Type.Object(
  {
    url: Type.String({ minLength: 1, maxLength: 2000 }),
    document_title: Type.String({ minLength: 1, maxLength: 500 }),
    categories: Type.Optional(Categories),
    collection_id: Type.Optional(Uuid()),
  },
  closed,
);
export type UploadWebsiteBody = Static<typeof UploadWebsiteBody>;

const UrlPattern = Type.String({
  minLength: 1,
  maxLength: 300,
  description:
    '`*` matches any characters; a pattern starting with `/` is matched against the path and query, else the whole URL',
});

export const CrawlWebsiteBody = Type.Object(
  {
    url: Type.String({ minLength: 1, maxLength: 2000, examples: ['https://help.example.com/'] }),
    collection_id: Uuid({ description: 'The collection the pages join, each a document of it' }),
    max_pages: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 1000, default: 50, description: 'Pages fetched at most (default 50)' }),
    ),
    max_depth: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 10,
        default: 3,
        description: 'Links followed away from the start page at most (default 3; 0: the start page only)',
      }),
    ),
    include: Type.Optional(
      Type.Array(UrlPattern, {
        maxItems: 50,
        description: 'Only pages matching one of these are kept (default: every page of the site)',
        examples: [['/docs/*', '/faq*']],
      }),
    ),
    exclude: Type.Optional(
      Type.Array(UrlPattern, {
        maxItems: 50,
        description: 'Pages matching one of these are left out',
        examples: [['/blog/*']],
      }),
    ),
    categories: Type.Optional(Categories),
  },
  closed,
);
export type CrawlWebsiteBody = Static<typeof CrawlWebsiteBody>;

/** `crawl_<uuid>` or a bare UUID. */
export const CrawlId = Type.String({
  pattern: '^(crawl_)?[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$',
  description: 'crawl_<uuid> (a bare UUID is accepted)',
});

export const Crawl = Type.Object(
  {
    crawl_id: Type.String({ examples: ['crawl_0f8fad5b-d9cb-469f-a165-70867728950e'] }),
    collection_id: Uuid(),
    url: Type.String({ examples: ['https://help.example.com/'] }),
    max_pages: Type.Integer(),
    max_depth: Type.Integer(),
    include: Type.Array(Type.String()),
    exclude: Type.Array(Type.String()),
    categories: Type.Array(Type.String()),
    status: StringEnum(TASK_STATUSES),
    error: Nullable(Type.String()),
    progress: Nullable(
      Type.Object(
        {
          stage: Type.String({ description: 'robots, sitemap, crawling (pages fetched), removing' }),
          done: Type.Integer(),
          total: Nullable(Type.Integer({ description: 'pages known so far, at most max_pages; null while unknown' })),
        },
        { description: 'How far the crawl has got; null before it starts' },
      ),
    ),
    pages: Type.Object(
      {
        added: Type.Integer(),
        updated: Type.Integer(),
        unchanged: Type.Integer(),
        removed: Type.Integer(),
        failed: Type.Integer(),
        skipped: Type.Integer({ description: 'Out of the site, refused by robots.txt, filtered, or past the limits' }),
      },
      { description: 'What this run did; the documents of added and updated pages are then ingested as their tasks' },
    ),
    failures: Type.Array(Type.Object({ url: Type.String(), error: Type.String() }), {
      description: 'Pages that could not be fetched (the last 20)',
    }),
    created_at: Timestamp(),
    started_at: Nullable(Timestamp()),
    completed_at: Nullable(Timestamp()),
  },
  { description: 'A website crawl into a collection' },
);
export type Crawl = Static<typeof Crawl>;

/**
 * The multipart form of POST /documents/upload/file. The handler reads it as a stream and checks
 * each field itself; this schema documents it (OpenAPI request body) and is never compiled.
 */
export const UploadFileForm = Type.Object({
  file: Type.String({
    format: 'binary',
    contentMediaType: 'application/octet-stream',
    description:
      'The file, up to MAX_UPLOAD_MB: PDF (scanned pages read by OCR), DOCX, XLSX, PPTX, ODT, ODS, ODP, RTF, EML, HTML, Markdown, CSV, TSV, JSON, plain text, or a PNG, JPEG or TIFF image (read by OCR). The type is told by the content, then by the declared type or the name.',
  }),
  document_title: Type.String({ minLength: 1, maxLength: 500, examples: ['Returns policy'] }),
  categories: Type.Optional(
    Type.String({
      description: 'A JSON array of up to 50 category names.',
      contentMediaType: 'application/json',
      examples: ['["faq","returns"]'],
    }),
  ),
  collection_id: Type.Optional(Type.String({ format: 'uuid' })),
});

export const UpdateDocumentBody = Type.Object(
  {
    document_title: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })),
    content: Type.Optional(Type.String({ minLength: 1 })),
    categories: Type.Optional(Categories),
    questions: Type.Optional(Questions),
    collection_id: Type.Optional(Nullable(Uuid())),
  },
  closed,
);
export type UpdateDocumentBody = Static<typeof UpdateDocumentBody>;

export const Task = Type.Object({
  task_id: Type.String(),
  document_id: Type.String(),
  status: StringEnum(TASK_STATUSES),
  error: Nullable(Type.String()),
  embedding_status: StringEnum(['pending', 'completed', 'unavailable'] as const),
  embedding_error: Nullable(Type.String()),
  chunk_count: Type.Integer(),
  progress: Nullable(
    Type.Object(
      {
        stage: Type.String({
          description:
            'extracting (PDF pages), ocr (pages read by OCR), parsing (rows, sheets, slides), crawling (pages fetched), chunking, embedding, indexing',
        }),
        done: Type.Integer(),
        total: Nullable(Type.Integer({ description: 'null while the total is not known' })),
      },
      { description: 'How far the task has got while processing; null before it starts' },
    ),
  ),
  created_at: Timestamp(),
  completed_at: Nullable(Timestamp()),
});
export type Task = Static<typeof Task>;

export const SearchBody = Type.Object(
  {
    query: Type.String({ minLength: 1, maxLength: 4000 }),
    search_method: Type.Object(
      {
        enable_vectorsearch: Type.Optional(Type.Boolean({ default: true })),
        enable_fulltextsearch: Type.Optional(Type.Boolean({ default: true })),
        enable_docstoresearch: Type.Optional(Type.Boolean({ default: true })),
      },
      closed,
    ),
    top_k: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 4 })),
    categories: Categories,
    start_date: Type.Optional(IsoDate()),
    end_date: Type.Optional(IsoDate()),
    collection_id: Type.Optional(Uuid()),
  },
  closed,
);
export type SearchBody = Static<typeof SearchBody>;

const LaneScores = Type.Object({
  vector: Type.Optional(Type.Number()),
  fulltext: Type.Optional(Type.Number()),
  docstore: Type.Optional(Type.Number()),
});

export const SearchResultItem = Type.Object({
  chunk_id: Uuid(),
  text: Type.String(),
  document_id: Type.String({ description: 'doc_<uuid>' }),
  title: Type.String(),
  collection_id: Nullable(Uuid()),
  categories: Type.Array(Type.String()),
  language: Type.String(),
  score: Type.Number({ description: 'Reciprocal-rank-fusion score' }),
  scores: LaneScores,
  ranks: LaneScores,
});

export const SearchResponse = Type.Object({
  query: Type.String(),
  results: Type.Array(SearchResultItem),
  total: Type.Integer(),
  vector_lane: StringEnum(['used', 'unavailable', 'disabled'] as const),
  vector_lane_reason: Nullable(Type.String()),
  lanes: Type.Array(Type.String(), { description: 'Lanes that ran and were fused' }),
});

export const CheckSimilarityBody = Type.Object(
  {
    document: Type.String({ minLength: 1, maxLength: 1_000_000 }),
    customer_id: Type.String({ minLength: 1, description: "The caller's company id" }),
    similarity: Type.Optional(Type.Number({ minimum: 0, maximum: 1, default: 0.9 })),
  },
  closed,
);
export type CheckSimilarityBody = Static<typeof CheckSimilarityBody>;

export const SimilarityResponse = Type.Object({
  is_duplicate: Type.Boolean(),
  max_similarity: Type.Number(),
  threshold: Type.Number(),
  method: StringEnum(['embeddings', 'shingles'] as const),
  matches: Type.Array(Type.Object({ document_id: Type.String(), title: Type.String(), similarity: Type.Number() })),
});

export const StatsResponse = Type.Object({
  total_documents: Type.Integer(),
  total_chunks: Type.Integer(),
  total_collections: Type.Integer(),
  total_bytes: Type.Integer(),
  by_status: Type.Record(Type.String(), Type.Integer()),
  by_source_type: Type.Record(Type.String(), Type.Integer()),
  by_language: Type.Record(Type.String(), Type.Integer()),
  categories: Type.Array(Type.Object({ category: Type.String(), count: Type.Integer() })),
  embeddings: Type.Object({
    available: Type.Boolean(),
    provider: Nullable(Type.String()),
    reason: Nullable(Type.String()),
    embedded_chunks: Type.Integer(),
    documents_without_embeddings: Type.Integer(),
  }),
  vector_index: StringEnum(['in-process', 'pgvector'] as const),
});
