/**
 * Reads a chat stream with the `eventsource` package (a browser-compatible EventSource), posting
 * the chat form (text fields, and files such as `audio` as File values) through its fetch hook.
 * Resolves with every event once `end` arrives.
 */
import { EventSource } from 'eventsource';

export interface ReceivedEvent {
  type: string;
  data: Record<string, unknown> & { type: string; content: string; conversation_id: string };
  at: number;
}

const TYPES = ['start', 'transcribed_text', 'agent_text_chunk', 'chunk', 'end', 'error'];

export function readChatStream(
  url: string,
  headers: Record<string, string>,
  form: Record<string, string | Blob>,
  onEvent?: (event: ReceivedEvent, source: EventSource) => void,
): Promise<ReceivedEvent[]> {
  return new Promise((resolve, reject) => {
    const events: ReceivedEvent[] = [];
    const source = new EventSource(url, {
      fetch: (input, init) => {
        const body = new FormData();
        for (const [name, value] of Object.entries(form)) {
          if (typeof value === 'string') body.set(name, value);
          else body.set(name, value);
        }
        return fetch(input, {
          ...init,
          method: 'POST',
          body,
          headers: { ...(init?.headers as Record<string, string>), ...headers },
        });
      },
    });
    for (const type of TYPES) {
      source.addEventListener(type, (message) => {
        const event = { type, data: JSON.parse(message.data) as ReceivedEvent['data'], at: Date.now() };
        events.push(event);
        onEvent?.(event, source);
        if (type === 'end') {
          source.close();
          resolve(events);
        }
      });
    }
    source.onerror = (error) => {
      source.close();
      reject(
        new Error(
          `event stream failed: ${error.message ?? 'unknown'} (${error.code ?? 'no status'}) after ${events.map((e) => e.type).join(',')}`,
        ),
      );
    };
  });
}

/** One server-sent event as written on the wire (comments are skipped). */
export interface Frame {
  id: string | null;
  retry: number | null;
  type: string;
  data: ReceivedEvent['data'];
}

/** The frames of an event-stream response, as they arrive. */
export async function* readFrames(response: Response): AsyncGenerator<Frame> {
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of response.body!) {
    buffer += decoder.decode(chunk as Uint8Array, { stream: true });
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const fields = new Map<string, string>();
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        if (colon < 0) fields.set(line, '');
        else fields.set(line.slice(0, colon), line.slice(colon + 1).replace(/^ /, ''));
      }
      if (!fields.has('data')) continue;
      yield {
        id: fields.get('id') ?? null,
        retry: fields.has('retry') ? Number(fields.get('retry')) : null,
        type: fields.get('event') ?? 'message',
        data: JSON.parse(fields.get('data')!) as ReceivedEvent['data'],
      };
    }
  }
}

/** POSTs the chat form to a stream URL (with `Last-Event-ID` when given). */
export function postStream(
  url: string,
  headers: Record<string, string>,
  form: Record<string, string>,
  options: { lastEventId?: string; signal?: AbortSignal } = {},
): Promise<Response> {
  const body = new FormData();
  for (const [name, value] of Object.entries(form)) body.set(name, value);
  return fetch(url, {
    method: 'POST',
    headers: {
      ...headers,
      accept: 'text/event-stream',
      ...(options.lastEventId ? { 'last-event-id': options.lastEventId } : {}),
    },
    body,
    ...(options.signal ? { signal: options.signal } : {}),
  });
}
