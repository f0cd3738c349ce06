/** How a webhook message leaves the process: one HTTP POST to a receiver, its outcome recorded. */

export interface WebhookRequest {
  url: string;
  /** The Standard Webhooks headers (webhook-id, webhook-timestamp, webhook-signature). */
  headers: Record<string, string>;
  /** The JSON body, sent byte for byte as signed. */
  body: string;
  signal: AbortSignal;
}

export interface WebhookOutcome {
  /** A 2xx answer. */
  ok: boolean;
  /** The receiver's HTTP status; null when there was no answer (refused, unreachable, timed out). */
  status: number | null;
  latencyMs: number;
  /** Why it failed, for the delivery log (never a header's value); null when ok. */
  error: string | null;
  /** The receiver's Retry-After, in milliseconds, when it gave one. */
  retryAfterMs?: number;
}

export interface WebhookSender {
  /** Sends one message; never throws for what the receiver or the network did (see `error`). */
  send(request: WebhookRequest): Promise<WebhookOutcome>;
  /** Refuses an address before it is stored: a message naming the problem, or null when acceptable. */
  checkUrl(url: string): string | null;
  close(): Promise<void>;
}
