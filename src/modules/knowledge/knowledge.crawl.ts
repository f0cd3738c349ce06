/**
 * The website crawler: from a start URL, breadth first, within the start's site (its host, with
 * or without `www.`), up to `maxPages` pages and `maxDepth` links away, through the include and
 * exclude patterns; `robots.txt` read first and obeyed (its rules and Crawl-delay for our agent),
 * the sitemaps it names (or `/sitemap.xml`) read for more pages; `concurrency` fetches at once
 * and at least `delayMs` between two starts. Every fetch goes through the WebFetcher (the network
 * policy, checked on each redirect hop too). Pages known from the previous run are fetched
 * conditionally (ETag / Last-Modified) and compared by content hash, so an unchanged page is
 * not read again. What to do with each page is the caller's (knowledge.crawls.ts).
 */
import { createHash } from 'node:crypto';
import robotsParserModule from 'robots-parser';
import { FetchError, type FetchedPage, type WebFetcher } from '../../ports/web-fetcher.js';
import { normalizeUrl } from './knowledge.crawl-links.js';
import type { Parsers } from './knowledge.parsers.js';

// robots-parser is CommonJS: its module.exports is the function its types call `default`.
const robotsParser = robotsParserModule as unknown as typeof robotsParserModule.default;

export const CRAWLER_AGENT = 'SwitchboardBot';
/** Sitemaps read per crawl (an index and the sitemaps it lists). */
const MAX_SITEMAPS = 20;
/** The longest Crawl-delay obeyed; a site asking for more is crawled at this pace. */
const MAX_CRAWL_DELAY_MS = 30_000;

export interface CrawlPlan {
  startUrl: string;
  maxPages: number;
  maxDepth: number;
  include: string[];
  exclude: string[];
}

export interface KnownPage {
  url: string;
  etag: string | null;
  lastModified: string | null;
  contentHash: string;
  links: string[];
}

export interface CrawledPage {
  url: string;
  title: string;
  body: string;
  contentType: string;
  contentHash: string;
  etag: string | null;
  lastModified: string | null;
  links: string[];
}

export interface CrawlCallbacks {
  /** A new page, or a known one whose content changed. */
  changed(page: CrawledPage, known: KnownPage | undefined): Promise<void>;
  /** A known page found unchanged (304, or the same content). */
  unchanged(page: KnownPage): Promise<void>;
  failed(url: string, reason: string): void;
  progress(stage: string, done: number, total: number | null): void;
}

export interface CrawlOutcome {
  /** Pages kept by this run (changed or unchanged). */
  kept: Set<string>;
  /** Pages that answered 404 or 410, or asked not to be indexed. */
  gone: Set<string>;
  /** Whether every page in scope was reached (not stopped by max_pages): unseen known pages vanished. */
  complete: boolean;
  skipped: number;
}

const siteOf = (url: URL) => url.hostname.toLowerCase().replace(/^www\./, '');

/** A pattern with `*` for any characters; one starting with `/` is matched against the path and query. */
function matcher(patterns: string[]): (url: URL) => boolean {
  const tests = patterns.map((pattern) => {
    const source = pattern.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'));
    const regex = new RegExp(`^${source.join('.*')}$`, 'i');
    return (url: URL) => regex.test(pattern.startsWith('/') ? `${url.pathname}${url.search}` : url.href);
  });
  return (url) => tests.some((test) => test(url));
}

export const contentHash = (body: string) => createHash('sha256').update(body).digest('hex');

export async function crawlSite(
  plan: CrawlPlan,
  deps: {
    fetcher: WebFetcher;
    parsers: Parsers;
    concurrency: number;
    delayMs: number;
    known: Map<string, KnownPage>;
    signal?: AbortSignal;
  },
  on: CrawlCallbacks,
): Promise<CrawlOutcome> {
  const start = new URL(plan.startUrl);
  const site = siteOf(start);
  const included = plan.include.length ? matcher(plan.include) : () => true;
  const excluded = matcher(plan.exclude);
  const { fetcher, parsers, known, signal } = deps;

  let nextStart = 0;
  let delayMs = deps.delayMs;
  /** Waits for this fetch's turn: at least delayMs after the previous one started. */
  async function turn() {
    const wait = nextStart - Date.now();
    nextStart = Math.max(Date.now(), nextStart) + delayMs;
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    signal?.throwIfAborted();
  }

  // robots.txt: its rules for our agent; missing (4xx) is no rule; unreachable stops the crawl.
  on.progress('robots', 0, null);
  const robotsUrl = new URL('/robots.txt', start).href;
  let robotsText = '';
  try {
    await turn();
    robotsText = (await fetcher.fetchPage(robotsUrl, { signal })).body;
  } catch (error) {
    if (!(error instanceof FetchError)) throw error;
    if (!(error.status && error.status >= 400 && error.status < 500) && !/not HTML or text/.test(error.message))
      throw new FetchError(`robots.txt could not be read, so the site was not crawled: ${error.message}`);
  }
  const robots = robotsParser(robotsUrl, robotsText);
  const crawlDelay = robots.getCrawlDelay(CRAWLER_AGENT);
  if (crawlDelay) delayMs = Math.max(delayMs, Math.min(crawlDelay * 1000, MAX_CRAWL_DELAY_MS));

  let skipped = 0;
  const queued = new Set<string>();
  const frontier: { url: string; depth: number }[] = [];
  /** Whether a URL may be crawled: in the site, allowed by robots, through the patterns. */
  function inScope(raw: string, isStart = false): boolean {
    const url = new URL(raw);
    if (siteOf(url) !== site) return false;
    if (robots.isAllowed(url.href, CRAWLER_AGENT) === false) return false;
    return isStart || (included(url) && !excluded(url));
  }
  function enqueue(raw: string, depth: number) {
    const url = normalizeUrl(raw);
    if (!url || queued.has(url)) return;
    queued.add(url);
    if (depth > plan.maxDepth || !inScope(url)) {
      skipped++;
      return;
    }
    frontier.push({ url, depth });
  }

  const startUrl = normalizeUrl(start.href)!;
  queued.add(startUrl);
  if (!inScope(startUrl, true)) throw new FetchError(`robots.txt does not let ${CRAWLER_AGENT} crawl ${startUrl}`);
  frontier.push({ url: startUrl, depth: 0 });

  // Sitemaps: those robots.txt names on this site, else /sitemap.xml; their pages at depth 1.
  on.progress('sitemap', 0, null);
  const sitemaps = robots.getSitemaps().filter((url: string) => {
    const parsed = normalizeUrl(url);
    return parsed !== null && siteOf(new URL(parsed)) === site;
  });
  if (sitemaps.length === 0) sitemaps.push(new URL('/sitemap.xml', start).href);
  for (let read = 0; read < sitemaps.length && read < MAX_SITEMAPS; read++) {
    try {
      await turn();
      const page = await fetcher.fetchPage(sitemaps[read]!, { signal, accept: 'sitemap' });
      const entries = await parsers.sitemap(page.body, page.url);
      for (const url of entries.sitemaps)
        if (siteOf(new URL(url)) === site && !sitemaps.includes(url)) sitemaps.push(url);
      for (const url of entries.pages) enqueue(url, 1);
    } catch (error) {
      if (!(error instanceof FetchError)) throw error;
      // A site without a sitemap, or a broken one: the links are crawled all the same.
    }
  }

  const kept = new Set<string>();
  const gone = new Set<string>();
  const fetchedUrls = new Set<string>();
  let attempted = 0;
  let capped = false;
  const total = () => Math.min(plan.maxPages, attempted + frontier.length);

  async function visit(item: { url: string; depth: number }) {
    const previous = known.get(item.url);
    let page: FetchedPage;
    try {
      await turn();
      page = await fetcher.fetchPage(item.url, {
        signal,
        etag: previous?.etag,
        lastModified: previous?.lastModified,
      });
    } catch (error) {
      if (!(error instanceof FetchError)) throw error;
      if (error.status === 404 || error.status === 410) gone.add(item.url);
      else on.failed(item.url, error.message);
      return;
    }
    // A redirect: the page is kept under the address it ended at, if that is in scope and new.
    const url = normalizeUrl(page.url) ?? item.url;
    if (url !== item.url) {
      if (!inScope(url) || fetchedUrls.has(url)) {
        skipped++;
        return;
      }
      queued.add(url);
      const waiting = frontier.findIndex((entry) => entry.url === url);
      if (waiting >= 0) frontier.splice(waiting, 1);
    }
    fetchedUrls.add(url);
    const before = known.get(url);
    if (page.status === 304 && before) {
      kept.add(url);
      await on.unchanged({
        ...before,
        etag: page.etag ?? before.etag,
        lastModified: page.lastModified ?? before.lastModified,
      });
      for (const link of before.links) enqueue(link, item.depth + 1);
      return;
    }
    const html = !page.contentType.startsWith('text/plain');
    const read = html ? await parsers.links(page.body, url) : { links: [], title: '', noindex: false, nofollow: false };
    for (const link of read.links) enqueue(link, item.depth + 1);
    if (read.noindex || !included(new URL(url)) || excluded(new URL(url))) {
      // The start page outside the patterns is read for its links only; a noindex page is not kept.
      if (read.noindex) gone.add(url);
      return;
    }
    const hash = contentHash(page.body);
    const crawled: CrawledPage = {
      url,
      title: read.title,
      body: page.body,
      contentType: page.contentType,
      contentHash: hash,
      etag: page.etag,
      lastModified: page.lastModified,
      links: read.links,
    };
    kept.add(url);
    if (before && before.contentHash === hash)
      await on.unchanged({ ...before, etag: page.etag, lastModified: page.lastModified, links: read.links });
    else await on.changed(crawled, before);
  }

  on.progress('crawling', 0, total());
  let running = 0;
  await new Promise<void>((resolve, reject) => {
    let failed = false;
    const pump = () => {
      if (failed) return;
      while (running < deps.concurrency && frontier.length > 0) {
        if (attempted >= plan.maxPages) {
          capped = true;
          break;
        }
        const item = frontier.shift()!;
        running++;
        attempted++;
        visit(item).then(
          () => {
            running--;
            on.progress('crawling', attempted - running, total());
            pump();
          },
          (error: unknown) => {
            failed = true;
            reject(error as Error);
          },
        );
      }
      if (running === 0) resolve();
    };
    pump();
  });
  return { kept, gone, complete: !capped && frontier.length === 0, skipped: skipped + frontier.length };
}
