/** The documents family (`/api/public/documents…`): records, uploads, tasks, search, checks. */
import fastifyMultipart from '@fastify/multipart';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { companyContext } from '../../http/auth.js';
import { AppError, AppErrors, errorResponses, truncateQuoted } from '../../http/errors.js';
import { describeUnsafeInput, findUnsafeInput } from '../../http/validation.js';

import {
  CheckSimilarityBody,
  DeleteStatus,
  Document,
  DocumentId,
  DocumentPage,
  ListDocumentsBody,
  SearchBody,
  SearchResponse,
  SimilarityResponse,
  StatsResponse,
  Task,
  TaskId,
  UpdateDocumentBody,
  UploadArticleBody,
  UploadFileForm,
  UploadResult,
  UploadWebsiteBody,
  Crawl,
  CrawlId,
  CrawlWebsiteBody,
} from './knowledge.schemas.js';
import type { KnowledgeService, UploadedFile } from './knowledge.service.js';

const errors = errorResponses('detail');
const tags = ['documents'];
const DocumentParams = Type.Object({ documentId: DocumentId });

const FORM_FIELD_BYTES = 64 * 1024;

/** The form's limits are 400s of the family, not the plugin's 413s ("reach files limit"). */
const FORM_LIMIT_MESSAGES: Record<string, string> = {
  FST_FILES_LIMIT: "Invalid form: only one file may be sent, in field 'file'",
  FST_FIELDS_LIMIT: 'Invalid form: more than 10 fields',
  FST_PARTS_LIMIT: 'Invalid form: too many parts',
};

/** A framing error of the form (no boundary, a truncated part) or one of its limits, as a 400. */
function formError(error: unknown): unknown {
  if (error instanceof AppError) return error;
  const { code, statusCode } = error as { code?: string; statusCode?: number };
  if (code && FORM_LIMIT_MESSAGES[code]) return AppErrors.validation(FORM_LIMIT_MESSAGES[code]);
  if (error instanceof Error && (statusCode === undefined || statusCode === 500)) {
    return AppErrors.validation(`The multipart form could not be read: ${truncateQuoted(error.message)}`);
  }
  return error;
}

/** The form's text fields and its one file, refusing other files and values cut at the field limit. */
async function readUploadParts(request: FastifyRequest) {
  const fields: Record<string, string> = {};
  let file: UploadedFile | undefined;
  try {
    for await (const part of request.parts()) {
      const name = truncateQuoted(part.fieldname);
      if (part.type === 'file') {
        if (part.fieldname !== 'file') throw AppErrors.validation(`Invalid field '${name}': only 'file' may be a file`);
        file = { fileName: part.filename, mimeType: part.mimetype, bytes: await part.toBuffer() };
      } else if (part.valueTruncated) {
        throw AppErrors.validation(`Invalid field '${name}': longer than ${FORM_FIELD_BYTES} bytes`);
      } else if (typeof part.value === 'string') {
        fields[part.fieldname] = part.value;
      }
    }
  } catch (error) {
    throw formError(error);
  }
  const unsafe = findUnsafeInput({ ...fields, file: file && { name: file.fileName, type: file.mimeType } });
  if (unsafe) throw AppErrors.validation(describeUnsafeInput('body', unsafe));
  return { fields, file };
}

/** Reads the multipart form of a file upload: file, document_title, categories (JSON), collection_id. */
async function readUploadForm(request: FastifyRequest) {
  if (!request.isMultipart()) throw AppErrors.unsupportedMediaType('Send the file as multipart/form-data');
  const { fields, file } = await readUploadParts(request);
  if (!file)
    throw AppErrors.validation(
      'field file is required (a document, spreadsheet, presentation, e-mail, text file or image)',
    );
  const title = fields.document_title?.trim();
  if (!title) throw AppErrors.validation('field document_title is required');
  if (title.length > 500) throw AppErrors.validation('field document_title must be at most 500 characters');
  let categories: string[] | undefined;
  if (fields.categories !== undefined && fields.categories.trim() !== '') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(fields.categories);
    } catch {
      throw AppErrors.validation('field categories must be a JSON array of strings, e.g. ["faq"]');
    }
    if (
      !Array.isArray(parsed) ||
      parsed.some((item) => typeof item !== 'string' || item === '' || item.length > 100) ||
      parsed.length > 50
    ) {
      throw AppErrors.validation('field categories must be a JSON array of up to 50 non-empty strings');
    }
    // The array arrives as text, so the check of the form's fields saw only its escapes (\u0000).
    const unsafe = findUnsafeInput({ categories: parsed });
    if (unsafe) throw AppErrors.validation(describeUnsafeInput('body', unsafe));
    categories = parsed as string[];
  }
  const collectionId = fields.collection_id?.trim() || undefined;
  if (collectionId && !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(collectionId)) {
    throw AppErrors.validation('field collection_id must be a UUID');
  }
  return { title, categories, collectionId: collectionId?.toLowerCase(), file };
}

export function documentsRoutes(
  knowledge: KnowledgeService,
  options: { maxUploadBytes: number },
): FastifyPluginAsyncTypebox {
  return async (app) => {
    await app.register(fastifyMultipart, {
      limits: { fileSize: options.maxUploadBytes, files: 1, fields: 10, fieldSize: FORM_FIELD_BYTES },
      throwFileSizeLimit: true,
    });

    app.post(
      '/documents/list',
      {
        config: { listCache: true },
        schema: {
          operationId: 'listDocuments',
          tags,
          summary: 'Documents of the company, page by page, with filters',
          description:
            'Documents of the company, newest first, filtered by categories, creation dates and collection, one page at a time (`page`, `limit`).',
          body: ListDocumentsBody,
          response: { 200: DocumentPage, ...errors },
        },
      },
      async (request) => knowledge.listDocuments(companyContext(request), request.body),
    );

    app.post(
      '/documents/search',
      {
        schema: {
          operationId: 'searchDocuments',
          tags,
          summary: 'Hybrid search (vector, full text, docstore) fused by reciprocal rank',
          description:
            'Searches the knowledge base with the enabled lanes (vector, full text, docstore) and fuses their rankings by weighted reciprocal rank. Answers the top `top_k` chunks with their documents and scores.',
          body: SearchBody,
          response: { 200: SearchResponse, ...errors },
        },
      },
      async (request) => knowledge.searchDocuments(companyContext(request), request.body),
    );

    app.post(
      '/documents/upload/file',
      {
        bodyLimit: options.maxUploadBytes + 1024 * 1024,
        schema: {
          operationId: 'uploadDocumentFile',
          tags,
          summary: 'Upload a file (multipart: file, document_title, categories, collection_id)',
          description:
            'Stores a file sent as a multipart form (PDF, DOCX, XLSX, PPTX, ODT, ODS, ODP, RTF, EML, HTML, Markdown, CSV, TSV, JSON, plain text; PNG, JPEG, TIFF and scanned PDF pages read by OCR) and queues its extraction and indexing. The type is told by the content, then by the declared type or the name: 415 for other types or a type the content contradicts, 413 over the size of the type or an archive that expands beyond the limits. Answers 202 with the task to follow at /documents/task/{taskId}.',
          consumes: ['multipart/form-data'],
          multipartBody: UploadFileForm,
          response: { 202: UploadResult, ...errors },
        },
      },
      async (request, reply) => {
        const context = companyContext(request);
        return reply.code(202).send(await knowledge.uploadFile(context, await readUploadForm(request)));
      },
    );

    app.post(
      '/documents/upload/article',
      {
        bodyLimit: options.maxUploadBytes,
        schema: {
          operationId: 'uploadDocumentArticle',
          tags,
          summary: 'Upload text',
          description:
            'Stores a text and queues its indexing. Answers 202 with the task to follow at /documents/task/{taskId}.',
          body: UploadArticleBody,
          response: { 202: UploadResult, ...errors },
        },
      },
      async (request, reply) =>
        reply.code(202).send(await knowledge.uploadArticle(companyContext(request), request.body)),
    );

    app.post(
      '/documents/upload/website',
      {
        schema: {
          operationId: 'uploadDocumentWebsite',
          tags,
          summary: 'Fetch a web page and add its readable text',
          description:
            'Queues the fetch of a public web page; its readable text is extracted and indexed. Private, loopback and link-local addresses are refused. Answers 202 with the task.',
          body: UploadWebsiteBody,
          response: { 202: UploadResult, ...errors },
        },
      },
      async (request, reply) =>
        reply.code(202).send(await knowledge.uploadWebsite(companyContext(request), request.body)),
    );

    app.post(
      '/documents/upload/crawl',
      {
        schema: {
          operationId: 'crawlDocumentWebsite',
          tags,
          summary: 'Crawl a website into a collection',
          description:
            'Queues a crawl of a site from its start URL: pages of the same site (its host, with or without www.), breadth first, up to `max_pages` pages and `max_depth` links away, through the `include` and `exclude` patterns. robots.txt is obeyed and the sitemaps it names (or /sitemap.xml) are read; pages are fetched a few at a time with a pause between fetches, each hop through the same network policy as website uploads (private, loopback and link-local addresses refused, redirects included). Each page becomes a document of the collection. Posting the same URL for the same collection again crawls it again: changed pages are updated (ETag, Last-Modified or content compared), vanished pages removed, unchanged ones left as they are. Answers 202 with the crawl; 409 while the same crawl is still under way. Follow it with GET /documents/crawl/{crawlId}.',
          body: CrawlWebsiteBody,
          response: { 202: Crawl, ...errors },
        },
      },
      async (request, reply) =>
        reply.code(202).send(await knowledge.crawlWebsite(companyContext(request), request.body)),
    );

    app.get(
      '/documents/crawl/:crawlId',
      {
        schema: {
          operationId: 'getDocumentCrawl',
          tags,
          summary: 'Status of a website crawl',
          description:
            'The crawl: pending, processing (progress in pages crawled of those known), then completed with what it added, updated, left unchanged and removed, or failed with the reason in `error` (robots.txt unreachable, or refusing the start page). The pages it kept are documents of the collection, each ingested by its own task.',
          params: Type.Object({ crawlId: CrawlId }),
          response: { 200: Crawl, ...errors },
        },
      },
      async (request) => knowledge.getCrawl(companyContext(request), request.params.crawlId),
    );

    app.get(
      '/documents/task/:taskId',
      {
        schema: {
          operationId: 'getDocumentTask',
          tags,
          summary: 'Status of a processing task',
          description:
            'The status of an upload task: pending, processing, then completed, or failed with the reason in `error`.',
          params: Type.Object({ taskId: TaskId }),
          response: { 200: Task, ...errors },
        },
      },
      async (request) => knowledge.task(companyContext(request), request.params.taskId),
    );

    app.post(
      '/documents/check-similarity',
      {
        bodyLimit: options.maxUploadBytes,
        schema: {
          operationId: 'checkDocumentSimilarity',
          tags,
          summary: 'Is this text a near-duplicate of a document already stored?',
          description:
            "Compares a text with the company's stored documents: whether it is a duplicate at the `similarity` threshold, the highest similarity and the closest documents (cosine of embeddings, or word shingles without an embedder).",
          body: CheckSimilarityBody,
          response: { 200: SimilarityResponse, ...errors },
        },
      },
      async (request) => knowledge.checkSimilarity(companyContext(request), request.body),
    );

    app.get(
      '/documents/stats',
      {
        schema: {
          operationId: 'getKnowledgeStats',
          tags,
          summary: 'Knowledge base statistics',
          description:
            'Counts of documents, chunks, collections and bytes of the company by status, source type, language and category, and the state of its embeddings.',
          response: { 200: StatsResponse, ...errors },
        },
      },
      async (request) => knowledge.stats(companyContext(request)),
    );

    app.get(
      '/documents/:documentId',
      {
        schema: {
          operationId: 'getDocument',
          tags,
          summary: 'A document with its extracted text',
          description: 'One document of the company with its metadata and extracted text.',
          params: DocumentParams,
          response: { 200: Type.Ref(Document), ...errors },
        },
      },
      async (request) => knowledge.getDocument(companyContext(request), request.params.documentId),
    );

    app.put(
      '/documents/:documentId',
      {
        bodyLimit: options.maxUploadBytes,
        schema: {
          operationId: 'updateDocument',
          tags,
          summary: 'Update title, categories, collection or content (content re-indexes)',
          description: 'Changes the fields sent of a document. New content is chunked and indexed again.',
          params: DocumentParams,
          body: UpdateDocumentBody,
          response: { 200: Type.Ref(Document), ...errors },
        },
      },
      async (request) => knowledge.updateDocument(companyContext(request), request.params.documentId, request.body),
    );

    app.delete(
      '/documents/:documentId',
      {
        schema: {
          operationId: 'deleteDocument',
          tags,
          summary: 'Delete a document with its chunks and vectors',
          description: 'Deletes a document with its chunks and vectors.',
          params: DocumentParams,
          response: { 200: DeleteStatus, ...errors },
        },
      },
      async (request) => knowledge.deleteDocument(companyContext(request), request.params.documentId),
    );
  };
}
