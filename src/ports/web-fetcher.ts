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
  status: number;
  contentType: string;
  body: string;
}

export interface WebFetcher {
  /**
   * GETs an http(s) page, following redirects, checking every hop against the network policy,
   * the time limit, the size cap and the content type. Throws FetchError with a readable reason.
   */
  fetchPage(url: string, signal?: AbortSignal): Promise<FetchedPage>;
}
