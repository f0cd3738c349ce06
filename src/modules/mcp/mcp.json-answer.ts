/**
 * Plain JSON answers to POSTs that need no stream. The Streamable HTTP transport lets a server
 * answer a POST with `application/json` or with an event stream; the SDK's transport takes one
 * mode for all of a session's requests, and a session's `ask_agent` may want progress
 * notifications. So the session streams, and a POST none of whose requests carries a progress
 * token is answered with its JSON-RPC responses as one JSON body (a batch: an array) — one write,
 * no event-stream framing for the client to parse. The SDK's own JSON mode drops the notifications
 * of a request too.
 */

interface JsonRpcLike {
  jsonrpc?: unknown;
  id?: unknown;
  method?: unknown;
  result?: unknown;
  error?: unknown;
  params?: { _meta?: { progressToken?: unknown } };
}

/** Whether a POST's answer can be plain JSON: no request in it asks for progress notifications. */
export function answersAsJson(body: unknown): boolean {
  const messages = (Array.isArray(body) ? body : [body]) as (JsonRpcLike | null)[];
  return messages.every((message) => message?.params?._meta?.progressToken === undefined);
}

/** The JSON-RPC responses in an event stream's `data:` fields (notifications left out). */
export function responsesOf(stream: string): unknown[] {
  const responses: unknown[] = [];
  for (const event of stream.split(/\r?\n\r?\n/)) {
    const data = event
      .split(/\r?\n/)
      .filter((line) => line.startsWith('data:'))
      .map((line) => line.slice(line.startsWith('data: ') ? 6 : 5))
      .join('\n');
    if (!data) continue;
    const message = JSON.parse(data) as JsonRpcLike;
    if (message.id !== undefined && (message.result !== undefined || message.error !== undefined))
      responses.push(message);
  }
  return responses;
}

export interface JsonAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Headers of an event stream that a JSON answer does not carry. */
const STREAM_HEADERS = new Set(['content-type', 'cache-control', 'connection', 'x-accel-buffering']);

/**
 * The transport's event-stream answer to a POST as JSON: the one response, or the batch's
 * array; undefined when the stream ended with none (the session closed under the request).
 */
export async function jsonAnswer(response: Response): Promise<JsonAnswer | undefined> {
  const responses = responsesOf(await response.text());
  if (!responses.length) return undefined;
  const headers: Record<string, string> = { 'content-type': 'application/json; charset=utf-8' };
  response.headers.forEach((value, name) => {
    if (!STREAM_HEADERS.has(name)) headers[name] = value;
  });
  return {
    status: response.status,
    headers,
    body: JSON.stringify(responses.length === 1 ? responses[0] : responses),
  };
}
