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
