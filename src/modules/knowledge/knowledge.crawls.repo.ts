/**
 * SQL of website crawls (migration 0185): the crawl row (created or run again, claimed, fenced by
 * its attempt, finished), its progress, and the pages it keeps with their documents. Company id
 * on every statement a request reaches; the job's statements are fenced by the crawl's attempt.
 * Claiming, handing back and fencing are the task changes of knowledge.tasks.repo.ts, shared with
 * documents' ingestion.
 */
import type { Selectable } from 'kysely';
import type { Executor } from '../../db/database.js';
import type { CrawlFailure, KbCrawlsTable } from './knowledge.tables.js';
import { CLAIMED, lockTaskAttempt, PENDING_AGAIN, requeueTasks } from './knowledge.tasks.repo.js';

export type CrawlRow = Selectable<KbCrawlsTable>;

export interface CrawlOptions {
  max_pages: number;
  max_depth: number;
  include_patterns: string[];
  exclude_patterns: string[];
  categories: string[];
}

const RESET = {
  status: 'pending' as const,
  error: null,
  stage: null,
  done: 0,
  total: null,
  pages_added: 0,
  pages_updated: 0,
  pages_unchanged: 0,
  pages_removed: 0,
  pages_failed: 0,
  pages_skipped: 0,
  failures: '[]',
  worker_id: null,
  started_at: null,
  completed_at: null,
};

export async function findCrawl(executor: Executor, companyId: string, id: string) {
  return executor
    .selectFrom('kb_crawls')
    .selectAll()
    .where('company_id', '=', companyId)
    .where('id', '=', id)
    .executeTakeFirst();
}

/**
 * Creates the crawl of `startUrl` into a collection, or puts the existing one back to pending
 * with the new options (a re-crawl); undefined when that crawl is still pending or running.
 */
export async function upsertCrawl(
  executor: Executor,
  row: { company_id: string; collection_id: string; start_url: string; created_by: string | null } & CrawlOptions,
  now: Date,
): Promise<CrawlRow | undefined> {
  return executor
    .insertInto('kb_crawls')
    .values(row)
    .onConflict((oc) =>
      oc
        .columns(['collection_id', 'start_url'])
        .doUpdateSet({
          max_pages: row.max_pages,
          max_depth: row.max_depth,
          include_patterns: row.include_patterns,
          exclude_patterns: row.exclude_patterns,
          categories: row.categories,
          created_by: row.created_by,
          updated_at: now,
          ...RESET,
        })
        .where('kb_crawls.status', 'not in', ['pending', 'processing']),
    )
    .returningAll()
    .executeTakeFirst();
}

/** Takes a pending crawl for `workerId`: processing, attempt + 1. */
export async function claimCrawl(executor: Executor, id: string, now: Date, workerId: number | null) {
  return executor
    .updateTable('kb_crawls')
    .set({ ...CLAIMED(now, workerId), started_at: now })
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .returningAll()
    .executeTakeFirst();
}

/** Puts back to pending the crawls of dead workers, or one crawl whose attempt is still current. */
export const requeueCrawls = (
  executor: Executor,
  owners: { workerIds: readonly number[] } | { id: string; attempt: number },
  now: Date,
) => requeueTasks(executor, 'kb_crawls', owners, now);

/** Locks the crawl if `attempt` is still the running one (else another worker took it over). */
export const lockCrawlAttempt = (executor: Executor, id: string, attempt: number) =>
  lockTaskAttempt(executor, 'kb_crawls', id, attempt);

export interface CrawlCounts {
  stage: string;
  done: number;
  total: number | null;
  pages_added: number;
  pages_updated: number;
  pages_unchanged: number;
  pages_removed: number;
  pages_failed: number;
  pages_skipped: number;
  failures: CrawlFailure[];
}

/** Progress and counts of the running attempt. */
export async function saveCrawlProgress(
  executor: Executor,
  id: string,
  attempt: number,
  counts: CrawlCounts,
  now: Date,
) {
  await executor
    .updateTable('kb_crawls')
    .set({ ...counts, failures: JSON.stringify(counts.failures), updated_at: now })
    .where('id', '=', id)
    .where('attempt', '=', attempt)
    .where('status', '=', 'processing')
    .execute();
}

export async function finishCrawl(
  executor: Executor,
  id: string,
  attempt: number,
  outcome: { status: 'completed' | 'failed'; error: string | null; counts: CrawlCounts },
  now: Date,
) {
  await executor
    .updateTable('kb_crawls')
    .set({
      ...outcome.counts,
      failures: JSON.stringify(outcome.counts.failures),
      status: outcome.status,
      error: outcome.error,
      worker_id: null,
      completed_at: now,
      updated_at: now,
    })
    .where('id', '=', id)
    .where('attempt', '=', attempt)
    .where('status', '=', 'processing')
    .execute();
}

export async function crawlPages(executor: Executor, crawlId: string) {
  return executor
    .selectFrom('kb_crawl_pages')
    .select(['url', 'document_id', 'etag', 'last_modified', 'content_hash', 'links'])
    .where('crawl_id', '=', crawlId)
    .execute();
}

export async function savePage(
  executor: Executor,
  page: {
    crawl_id: string;
    url: string;
    document_id: string;
    etag: string | null;
    last_modified: string | null;
    content_hash: string;
    links: string[];
  },
  now: Date,
) {
  const { crawl_id: _crawl, url: _url, ...rest } = page;
  await executor
    .insertInto('kb_crawl_pages')
    .values({ ...page, crawled_at: now })
    .onConflict((oc) => oc.columns(['crawl_id', 'url']).doUpdateSet({ ...rest, crawled_at: now }))
    .execute();
}

/** A crawled page's document given its new content, its task back to pending with a new task id. */
export async function resetPageDocument(
  executor: Executor,
  companyId: string,
  documentId: string,
  page: { title: string; bytes: Buffer; mimeType: string; categories: string[] },
  now: Date,
) {
  await executor
    .updateTable('kb_documents')
    .set({
      title: page.title,
      categories: page.categories,
      source_bytes: page.bytes,
      mime_type: page.mimeType,
      size_bytes: page.bytes.length,
      ...PENDING_AGAIN(now),
    })
    .where('company_id', '=', companyId)
    .where('id', '=', documentId)
    .execute();
}
