/**
 * Website crawls into a collection: the request (checked, the crawl row created or run again) and
 * the crawl job (knowledge.crawl.ts walks the site). Each page kept is a document of the
 * collection (source_type 'website', its fetched bytes kept until read), created or updated with
 * its ingestion job in one transaction; pages that vanished are removed once the crawl has
 * reached every page in scope (or at once when they answer 404/410). Like an ingestion task, a
 * crawl is owned by the worker that claimed it; every write is fenced by its attempt.
 */
import type { Db, Executor } from '../../db/database.js';
import type { CompanyContext } from '../../http/caller.js';
import { AppErrors } from '../../http/errors.js';
import type { JobQueue } from '../../jobs/queue.js';
import type { Clock } from '../../lib/clock.js';
import { CpuBusyError } from '../../lib/cpu-pool.js';
import { FetchError, type WebFetcher } from '../../ports/web-fetcher.js';
import { crawlSite, type CrawledPage, type KnownPage } from './knowledge.crawl.js';
import * as crawls from './knowledge.crawls.repo.js';
import { INGEST_JOB } from './knowledge.ingest.js';
import type { Parsers } from './knowledge.parsers.js';
import * as repo from './knowledge.repo.js';
import type * as S from './knowledge.schemas.js';

export const CRAWL_JOB = 'knowledge.crawl';
const RELEASE_DELAY_SECONDS = 10;
const MAX_FAILURES = 20;

export interface CrawlDeps {
  db: Db;
  queue: JobQueue;
  clock: Clock;
  fetcher: WebFetcher;
  parsers: Parsers;
  concurrency: number;
  delayMs: number;
  log: { warn(obj: object, msg: string): void; error(obj: object, msg: string): void };
  searchChanged(companyId: string): void;
}

const stripCrawlPrefix = (id: string) => id.replace(/^crawl_/, '').toLowerCase();

function toCrawl(row: crawls.CrawlRow): S.Crawl {
  return {
    crawl_id: `crawl_${row.id}`,
    collection_id: row.collection_id,
    url: row.start_url,
    max_pages: row.max_pages,
    max_depth: row.max_depth,
    include: row.include_patterns,
    exclude: row.exclude_patterns,
    categories: row.categories,
    status: row.status,
    error: row.error,
    progress: row.stage ? { stage: row.stage, done: row.done, total: row.total } : null,
    pages: {
      added: row.pages_added,
      updated: row.pages_updated,
      unchanged: row.pages_unchanged,
      removed: row.pages_removed,
      failed: row.pages_failed,
      skipped: row.pages_skipped,
    },
    failures: row.failures,
    created_at: row.created_at.toISOString(),
    started_at: row.started_at?.toISOString() ?? null,
    completed_at: row.completed_at?.toISOString() ?? null,
  };
}

/** A pattern as given, refused with a 400 when it holds what no URL can (controls, spaces). */
function patterns(field: string, values: string[] | undefined): string[] {
  const list = [...new Set((values ?? []).map((value) => value.trim()))];
  for (const value of list) {
    if (!value || /[\s\p{Cc}]/u.test(value))
      throw AppErrors.validation(
        `${field} holds "${value}", which no URL matches (blank, spaces or control characters)`,
      );
  }
  return list;
}

export function createCrawls(deps: CrawlDeps) {
  const { db, queue, clock } = deps;

  async function run(crawl: crawls.CrawlRow): Promise<void> {
    const counts: crawls.CrawlCounts = {
      stage: 'robots',
      done: 0,
      total: null,
      pages_added: 0,
      pages_updated: 0,
      pages_unchanged: 0,
      pages_removed: 0,
      pages_failed: 0,
      pages_skipped: 0,
      failures: [],
    };
    let lastWrite = 0;
    let writing: Promise<void> = Promise.resolve();
    const save = (force = false) => {
      if (!force && Date.now() - lastWrite < 500) return writing;
      lastWrite = Date.now();
      const snapshot = { ...counts, failures: [...counts.failures] };
      writing = writing
        .then(() => crawls.saveCrawlProgress(db, crawl.id, crawl.attempt, snapshot, clock.now()))
        .catch((error: unknown) => deps.log.warn({ err: error, crawlId: crawl.id }, 'crawl progress not saved'));
      return writing;
    };
    /** Runs `work` in a transaction if this attempt still owns the crawl (else throws Superseded). */
    const fenced = (work: (trx: Executor) => Promise<void>) =>
      db.transaction().execute(async (trx) => {
        if (!(await crawls.lockCrawlAttempt(trx, crawl.id, crawl.attempt))) throw new Superseded();
        await work(trx);
      });

    const previous = await crawls.crawlPages(db, crawl.id);
    const known = new Map<string, KnownPage>(
      previous.map((page) => [
        page.url,
        {
          url: page.url,
          etag: page.etag,
          lastModified: page.last_modified,
          contentHash: page.content_hash,
          links: page.links,
        },
      ]),
    );
    const documentOf = new Map(previous.map((page) => [page.url, page.document_id]));

    async function changed(page: CrawledPage, before: KnownPage | undefined) {
      const bytes = Buffer.from(page.body);
      const mimeType = page.contentType.startsWith('text/plain') ? 'text/plain' : 'text/html';
      const title = (page.title || page.url).slice(0, 500);
      await fenced(async (trx) => {
        let documentId = before ? documentOf.get(page.url) : undefined;
        if (documentId && (await repo.findDocument(trx, crawl.company_id, documentId))) {
          await crawls.resetPageDocument(
            trx,
            crawl.company_id,
            documentId,
            { title, bytes, mimeType, categories: crawl.categories },
            clock.now(),
          );
          counts.pages_updated++;
        } else {
          const inserted = await repo.insertDocument(trx, {
            company_id: crawl.company_id,
            collection_id: crawl.collection_id,
            title,
            categories: crawl.categories,
            created_by: crawl.created_by,
            source_type: 'website',
            source_url: page.url,
            file_name: null,
            mime_type: mimeType,
            size_bytes: bytes.length,
            source_bytes: bytes,
            content: '',
          });
          documentId = inserted.id;
          documentOf.set(page.url, documentId);
          counts.pages_added++;
        }
        await crawls.savePage(
          trx,
          {
            crawl_id: crawl.id,
            url: page.url,
            document_id: documentId,
            etag: page.etag,
            last_modified: page.lastModified,
            content_hash: page.contentHash,
            links: page.links.slice(0, 5000),
          },
          clock.now(),
        );
        await queue.send(trx, INGEST_JOB, { documentId });
      });
    }

    async function unchanged(page: KnownPage) {
      counts.pages_unchanged++;
      const documentId = documentOf.get(page.url);
      if (!documentId) return;
      await fenced((trx) =>
        crawls.savePage(
          trx,
          {
            crawl_id: crawl.id,
            url: page.url,
            document_id: documentId,
            etag: page.etag,
            last_modified: page.lastModified,
            content_hash: page.contentHash,
            links: page.links.slice(0, 5000),
          },
          clock.now(),
        ),
      );
    }

    try {
      const outcome = await crawlSite(
        {
          startUrl: crawl.start_url,
          maxPages: crawl.max_pages,
          maxDepth: crawl.max_depth,
          include: crawl.include_patterns,
          exclude: crawl.exclude_patterns,
        },
        { fetcher: deps.fetcher, parsers: deps.parsers, concurrency: deps.concurrency, delayMs: deps.delayMs, known },
        {
          changed,
          unchanged,
          failed(url, reason) {
            counts.pages_failed++;
            counts.failures = [...counts.failures, { url, error: reason }].slice(-MAX_FAILURES);
          },
          progress(stage, done, total) {
            Object.assign(counts, { stage, done, total });
            void save(stage !== 'crawling');
          },
        },
      );
      counts.pages_skipped = outcome.skipped;
      // Vanished: answered 404/410 or noindex; or, when every page in scope was reached, not met.
      const vanished = [...documentOf.keys()].filter(
        (url) => outcome.gone.has(url) || (outcome.complete && !outcome.kept.has(url)),
      );
      counts.stage = 'removing';
      counts.done = 0;
      counts.total = vanished.length;
      await fenced(async (trx) => {
        for (const url of vanished) {
          if (await repo.deleteDocumentRow(trx, crawl.company_id, documentOf.get(url)!)) counts.pages_removed++;
          counts.done++;
        }
        // The row is locked here: progress writes (outside) would wait on it; the finish writes the counts.
        await crawls.finishCrawl(
          trx,
          crawl.id,
          crawl.attempt,
          { status: 'completed', error: null, counts },
          clock.now(),
        );
      });
      if (vanished.length) deps.searchChanged(crawl.company_id);
    } catch (error) {
      if (error instanceof Superseded) return;
      // The CPU pool is full, or the database failed: the queue hands the crawl back for later.
      if (error instanceof CpuBusyError || !(error instanceof FetchError)) throw error;
      await writing;
      await crawls.finishCrawl(
        db,
        crawl.id,
        crawl.attempt,
        { status: 'failed', error: error.message, counts },
        clock.now(),
      );
    }
  }

  queue.defineTask<{ crawlId: string }, crawls.CrawlRow>({
    name: CRAWL_JOB,
    claim: (trx, data, workerId) => crawls.claimCrawl(trx, data.crawlId, clock.now(), workerId),
    run,
    async requeue(trx, workerIds) {
      const ids = await crawls.requeueCrawls(trx, { workerIds }, clock.now());
      for (const crawlId of ids) await queue.send(trx, CRAWL_JOB, { crawlId });
      return ids.length;
    },
    async release(trx, crawl) {
      const ids = await crawls.requeueCrawls(trx, { id: crawl.id, attempt: crawl.attempt }, clock.now());
      for (const crawlId of ids)
        await queue.send(trx, CRAWL_JOB, { crawlId }, { startAfterSeconds: RELEASE_DELAY_SECONDS });
    },
    pollingIntervalSeconds: 1,
    concurrency: 1,
  });

  return {
    /** POST /documents/upload/crawl: a crawl of the site into the collection, or the same crawl again. */
    async crawlWebsite(context: CompanyContext, body: S.CrawlWebsiteBody): Promise<S.Crawl> {
      let url: URL;
      try {
        url = new URL(body.url);
      } catch {
        throw AppErrors.validation(`url must be an absolute http(s) URL, got "${body.url}"`);
      }
      if (url.protocol !== 'http:' && url.protocol !== 'https:')
        throw AppErrors.validation(`url must use http or https, got ${url.protocol}`);
      if (url.username || url.password)
        throw AppErrors.validation('url must not contain credentials (user:password@); use a public site');
      url.hash = '';
      const options = {
        max_pages: body.max_pages ?? 50,
        max_depth: body.max_depth ?? 3,
        include_patterns: patterns('include', body.include),
        exclude_patterns: patterns('exclude', body.exclude),
        categories: [...new Set(body.categories ?? [])],
      };
      await deps.fetcher.checkUrl(url.href).catch((error: unknown) => {
        throw error instanceof FetchError ? AppErrors.validation(`url is refused: ${error.message}`) : error;
      });
      if (!(await repo.findCollection(db, context.companyId, body.collection_id)))
        throw AppErrors.notFound('Collection', body.collection_id);
      const row = await db.transaction().execute(async (trx) => {
        const saved = await crawls.upsertCrawl(
          trx,
          {
            company_id: context.companyId,
            collection_id: body.collection_id.toLowerCase(),
            start_url: url.href,
            created_by: context.userId,
            ...options,
          },
          clock.now(),
        );
        if (saved) await queue.send(trx, CRAWL_JOB, { crawlId: saved.id });
        return saved;
      });
      if (!row) throw AppErrors.conflict(`A crawl of ${url.href} into this collection is already under way`);
      return toCrawl(row);
    },
    async getCrawl(context: CompanyContext, id: string): Promise<S.Crawl> {
      const row = await crawls.findCrawl(db, context.companyId, stripCrawlPrefix(id));
      if (!row) throw AppErrors.notFound('Crawl', id);
      return toCrawl(row);
    },
    /** Claims and runs a crawl in this call (tests and tools; the queue's workers use the job). */
    async crawl(crawlId: string): Promise<void> {
      const row = await crawls.claimCrawl(db, crawlId, clock.now(), null);
      if (row) await run(row);
    },
  };
}

/** Another worker took the crawl over (this one was taken for dead): stop without writing. */
class Superseded extends Error {
  override readonly name = 'Superseded';
}
