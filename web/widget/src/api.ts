/**
 * The widget's calls to the service (`{base}/widget/v1/{key}/…`): settings, visitor sessions,
 * messages (streamed), history and the conversation's events. The visitor token is sent as a
 * bearer header; no cookies are ever sent (`credentials: 'omit'`).
 */
import { readEvents, type SseEvent } from './sse';

export interface WidgetInfo {
  title: string;
  greeting: string;
  color: string;
  position: 'bottom-right' | 'bottom-left';
  placeholder: string;
  language: string;
  direction: 'ltr' | 'rtl';
  theme?: 'auto' | 'light' | 'dark';
  available: boolean;
}

export interface Citation {
  document_id: string;
  title: string;
  url?: string | null;
}

export interface Message {
  id: string;
  role: 'user' | 'assistant' | 'human';
  content: string;
  created_at?: string;
  citations?: Citation[];
}

export interface Identity {
  user_id?: string;
  name?: string;
  email?: string;
  user_hash?: string;
}

/** A refusal of the service: its status and `detail`. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

async function failure(response: Response): Promise<ApiError> {
  let detail = `HTTP ${response.status}`;
  try {
    const body = (await response.json()) as { detail?: unknown };
    if (typeof body.detail === 'string') detail = body.detail;
  } catch {
    // not JSON: the status says enough
  }
  return new ApiError(response.status, detail);
}

export function createApi(base: string, key: string) {
  const root = `${base}/widget/v1/${encodeURIComponent(key)}`;
  const call = async (path: string, init: RequestInit & { token?: string | null } = {}) => {
    const headers: Record<string, string> = { ...(init.headers as Record<string, string> | undefined) };
    if (init.token) headers.authorization = `Bearer ${init.token}`;
    if (init.body !== undefined) headers['content-type'] = 'application/json';
    const response = await fetch(root + path, { ...init, headers, credentials: 'omit', mode: 'cors' });
    if (!response.ok && response.status !== 204) throw await failure(response);
    return response;
  };
  return {
    async info(): Promise<WidgetInfo> {
      return (await (await call('')).json()) as WidgetInfo;
    },
    async session(
      identity: Identity = {},
    ): Promise<{ visitor_token: string; visitor_id: string; identified: boolean }> {
      const response = await call('/sessions', { method: 'POST', body: JSON.stringify(identity) });
      return (await response.json()) as { visitor_token: string; visitor_id: string; identified: boolean };
    },
    async history(
      token: string,
      conversationId: string | null,
    ): Promise<{ conversation_id: string | null; data: Message[] }> {
      const query = conversationId ? `?conversation_id=${encodeURIComponent(conversationId)}` : '';
      return (await (await call(`/messages${query}`, { token })).json()) as {
        conversation_id: string | null;
        data: Message[];
      };
    },
    /** Sends a message (or, with `lastEventId`, resumes its answer) and reads the answer's events. */
    async send(
      token: string,
      body: { text?: string; conversation_id?: string },
      onEvent: (event: SseEvent) => void,
      options: { lastEventId?: string; signal?: AbortSignal } = {},
    ): Promise<number> {
      const headers: Record<string, string> = { accept: 'text/event-stream' };
      if (options.lastEventId) headers['last-event-id'] = options.lastEventId;
      const response = await call('/messages', {
        method: 'POST',
        token,
        headers,
        body: JSON.stringify(body),
        signal: options.signal,
      });
      if (response.status === 200) await readEvents(response, onEvent);
      return response.status;
    },
    /** The conversation's events (a person's replies, the hand-off status) until it closes. */
    async events(token: string, conversationId: string, onEvent: (event: SseEvent) => void, signal: AbortSignal) {
      const response = await call(`/conversations/${encodeURIComponent(conversationId)}/events`, {
        token,
        headers: { accept: 'text/event-stream' },
        signal,
      });
      await readEvents(response, onEvent);
    },
    async feedback(token: string, conversationId: string, rating: number): Promise<void> {
      await call(`/conversations/${encodeURIComponent(conversationId)}/feedback`, {
        method: 'POST',
        token,
        body: JSON.stringify({ rating }),
      });
    },
  };
}

export type Api = ReturnType<typeof createApi>;
