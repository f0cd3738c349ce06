/**
 * Server-sent events read from a `fetch` response (the widget's streams need POST bodies and an
 * `Authorization` header, which `EventSource` cannot send): frames `id:` / `event:` / `data:`,
 * comments ignored, one callback per event.
 */
export interface SseEvent {
  id: string | null;
  event: string;
  data: string;
}

/** Reads `response.body` to its end (or until `signal` aborts), calling `onEvent` per frame. */
export async function readEvents(response: Response, onEvent: (event: SseEvent) => void): Promise<void> {
  const body = response.body;
  if (!body) return;
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let id: string | null = null;
  let event = 'message';
  let data: string[] = [];
  const line = (text: string) => {
    if (text === '') {
      if (data.length) onEvent({ id, event, data: data.join('\n') });
      id = null;
      event = 'message';
      data = [];
      return;
    }
    if (text.charAt(0) === ':') return;
    const colon = text.indexOf(':');
    const field = colon < 0 ? text : text.slice(0, colon);
    let value = colon < 0 ? '' : text.slice(colon + 1);
    if (value.charAt(0) === ' ') value = value.slice(1);
    if (field === 'id') id = value;
    else if (field === 'event') event = value;
    else if (field === 'data') data.push(value);
  };
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let end: number;
    while ((end = buffer.search(/\r\n|\r|\n/)) >= 0) {
      const match = buffer.charAt(end) === '\r' && buffer.charAt(end + 1) === '\n' ? 2 : 1;
      line(buffer.slice(0, end));
      buffer = buffer.slice(end + match);
    }
  }
  if (buffer) line(buffer);
  line('');
}
