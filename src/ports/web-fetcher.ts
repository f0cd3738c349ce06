/** Fetching a web page for the knowledge base, with the network policy applied by the adapter. */

/** Why a page could not be fetched, in words for the document's task `error`. */
export class FetchError extends Error {
  override readonly name = 'FetchError';
  constructor(
    message: string,
    /** The final HTTP status, when the server answered. */
    readonly status?: number,
  ) {
    super(message);
  }
}

export interface FetchedPage {
  /** The address after redirects. */
  url: string;
  /** 304 (a conditional fetch found the page unchanged: the body is empty), else 2xx. */
  status: number;
  contentType: string;
  body: string;
  /** The validators the server sent (ETag, Last-Modified), for the next conditional fetch. */
  etag: string | null;
  lastModified: string | null;
}

export interface FetchOptions {
  signal?: AbortSignal;
  /** What may be answered: a page (HTML, text; the default) or a sitemap (XML, text). */
  accept?: 'page' | 'sitemap';
  /** A conditional fetch: a 304 answer comes back as status 304 with an empty body. */
  etag?: string | null;
  lastModified?: string | null;
}

export interface WebFetcher {
  /**
   * Checks a URL against the network policy before it is accepted: http(s), no credentials, a
   * literal address or every address the host resolves to now must be allowed. Resolves with the
   * parsed URL; throws FetchError with a readable reason. `fetchPage` checks again when it
   * connects, so a name that changes its answer later is still refused.
   */
  checkUrl(url: string, signal?: AbortSignal): Promise<URL>;
  /**
   * GETs an http(s) page, following redirects, checking every hop against the network policy,
   * the time limit, the size cap and the content type. Throws FetchError with a readable reason.
   */
  fetchPage(url: string, options?: FetchOptions): Promise<FetchedPage>;
}
