/**
 * The console's only way to the service: the public API, as a script would call it. Signed in
 * with a password, the session cookie goes along and every write carries the session's CSRF
 * token; signed in with an API key (developers), the key goes as x-api-key and lives in this
 * tab's sessionStorage only. Errors carry the API's own message, whatever the family's shape.
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const KEY_STORAGE = 'switchboard.apiKey';
let csrfToken: string | null = null;

export function setCsrfToken(token: string | null) {
  csrfToken = token;
}

export function apiKey(): string | null {
  return sessionStorage.getItem(KEY_STORAGE);
}

export function setApiKey(key: string | null) {
  if (key) sessionStorage.setItem(KEY_STORAGE, key);
  else sessionStorage.removeItem(KEY_STORAGE);
}

/** The message of an error body of any family: detail, message, or OpenAI's error.message. */
function messageOf(body: unknown, status: number): string {
  if (body && typeof body === 'object') {
    const record = body as Record<string, unknown>;
    if (typeof record.detail === 'string') return record.detail;
    if (typeof record.message === 'string') return record.message;
    const nested = record.error as Record<string, unknown> | undefined;
    if (nested && typeof nested.message === 'string') return nested.message;
  }
  return `The service answered ${status}`;
}

export interface RequestOptions {
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  body?: unknown;
  /** A multipart upload (sent as is). */
  form?: FormData;
  /** Extra headers (a chat token for the chat family). */
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

let onSignedOut: () => void = () => undefined;
/** Called when the service says the session has ended (401 on a route that needs it). */
export function whenSignedOut(handler: () => void) {
  onSignedOut = handler;
}

async function send(path: string, options: RequestOptions): Promise<Response> {
  const method = options.method ?? 'GET';
  const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
  const key = apiKey();
  if (key && !headers['x-api-token']) headers['x-api-key'] = key;
  if (method !== 'GET' && csrfToken && !key) headers['x-csrf-token'] = csrfToken;
  let body: BodyInit | undefined;
  if (options.form) body = options.form;
  else if (options.body !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(options.body);
  }
  const response = await fetch(path, { method, headers, body, credentials: 'same-origin', signal: options.signal });
  if (!response.ok) {
    const text = await response.text();
    let parsed: unknown = null;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      parsed = null;
    }
    if (response.status === 401 && !path.startsWith('/api/public/auth/') && !headers['x-api-token']) onSignedOut();
    throw new ApiError(response.status, messageOf(parsed, response.status));
  }
  return response;
}

/** A JSON call; `null` for 202/204 answers without a body. */
export async function api<T>(path: string, options: RequestOptions = {}): Promise<T> {
  const response = await send(path, options);
  if (response.status === 204 || response.headers.get('content-length') === '0') return null as T;
  const text = await response.text();
  return (text ? JSON.parse(text) : null) as T;
}

/** A binary answer (speech audio). */
export async function apiBlob(path: string, options: RequestOptions = {}): Promise<Blob> {
  return (await send(path, options)).blob();
}

export function query(params: Record<string, string | number | undefined>): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params))
    if (value !== undefined && value !== '') search.set(name, String(value));
  const text = search.toString();
  return text ? `?${text}` : '';
}

export interface Page<T> {
  data: T[];
  total: number;
}

export interface User {
  id: string;
  email: string;
  first_name: string;
  last_name: string;
}

export interface Me extends User {
  active_company_id: string | null;
  role: 'owner' | 'admin' | 'developer' | 'member' | null;
  memberships: { id: string; company_id: string; company_name: string; role: string }[];
}

export interface SignedIn {
  user: User;
  csrf_token: string;
  expires_at: string;
}

export interface StreamEvent {
  type: string;
  id: string;
  data: unknown;
}

/**
 * Reads a server-sent events stream of the API with the console's credentials (an EventSource
 * cannot send the API key), calling `onEvent` for each event until `signal` aborts. A stream
 * that ends or fails is opened again after a pause (`onReconnect` is told, so the caller can
 * read again what it may have missed); a 4xx ends it with `onError`.
 */
export function followEvents(
  path: string,
  handlers: { onEvent: (event: StreamEvent) => void; onReconnect?: () => void; onError?: (error: unknown) => void },
  signal: AbortSignal,
): void {
  const decoder = new TextDecoder();
  const open = async (attempt: number): Promise<void> => {
    let next = attempt + 1;
    try {
      const response = await send(path, { headers: { accept: 'text/event-stream' }, signal });
      if (attempt > 0) handlers.onReconnect?.();
      next = 1;
      const reader = response.body!.getReader();
      let buffer = '';
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        let end: number;
        while ((end = buffer.search(/\r?\n\r?\n/)) >= 0) {
          const frame = buffer.slice(0, end);
          buffer = buffer.slice(end).replace(/^\r?\n\r?\n/, '');
          let type = 'message';
          let id = '';
          const data: string[] = [];
          for (const line of frame.split(/\r?\n/)) {
            if (line.startsWith('event:')) type = line.slice(6).trim();
            else if (line.startsWith('id:')) id = line.slice(3).trim();
            else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
          }
          if (data.length === 0) continue;
          let parsed: unknown = data.join('\n');
          try {
            parsed = JSON.parse(parsed as string);
          } catch {
            // not JSON: kept as text
          }
          handlers.onEvent({ type, id, data: parsed });
        }
      }
    } catch (error) {
      if (signal.aborted) return;
      const status = (error as { status?: number }).status;
      if (status !== undefined && status >= 400 && status < 500 && status !== 408 && status !== 429) {
        handlers.onError?.(error);
        return;
      }
    }
    if (signal.aborted) return;
    await new Promise((resolve) => setTimeout(resolve, Math.min(500 * 2 ** next, 15_000)));
    if (!signal.aborted) return open(next);
  };
  void open(0);
}
