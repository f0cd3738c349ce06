/**
 * The undici dispatcher of every call to a model provider (LLM_HTTP2, LLM_HTTP2_MAX_STREAMS,
 * LLM_CA_FILE; docs/decisions.md "HTTP/2 to model providers"), built once by container.ts and
 * given to the model client (`createLlmClient({ dispatcher })`).
 *
 * Over HTTP/1.1 a streamed reply holds a connection, so each open turn costs the service two
 * sockets (its client's and its provider call's). With `http2` a TLS connection offers h2 by ALPN
 * and, when the provider picks it, carries up to `maxStreamsPerConnection` replies at once: a
 * turn then costs one socket, and a burst of thousands of turns opens tens of connections, not
 * thousands. A provider that answers with HTTP/1.1 (or a plain `http:` one: Ollama, vLLM on a
 * private network) keeps one connection per call in flight, as before.
 *
 * undici 7 multiplexes only when three of its gates are opened (nodejs/undici#4143, #5390):
 * - a Client's `pipelining` caps its requests in flight whatever the protocol: a connection is
 *   given `maxStreamsPerConnection` once it has negotiated h2 (1 over HTTP/1.1, where a second
 *   streamed reply must never queue behind the first);
 * - a non-idempotent request (POST) and a request whose body is a stream or an iterator (what
 *   `fetch` sends) each mark an h2 connection busy while another request runs: calls are marked
 *   idempotent (undici reads the flag for nothing else, and an HTTP/1.1 connection carries one
 *   call at a time anyway, so nothing is ever pipelined behind it), and a body given as an
 *   iterator is read into one buffer first (a prompt of a few kilobytes, built by the service).
 * Until an origin's first connection has said which protocol it speaks, the calls that arrive are
 * held (a TLS handshake) instead of each opening a connection of its own; once known, an origin
 * that spoke h2 gets connections that multiplex from their first request. Whether a connection
 * did is re-learned at each connect.
 */
import type { ClientHttp2Session, Settings as Http2Settings } from 'node:http2';
import { rootCertificates, type TLSSocket } from 'node:tls';
import { Agent, buildConnector, Client, Pool, type Dispatcher } from 'undici';

export interface ModelDispatcherOptions {
  /** Offer HTTP/2 by ALPN on TLS connections (HTTP/1.1 when the provider does not pick it). */
  http2: boolean;
  /**
   * Replies carried at once by one HTTP/2 connection before another is opened. Keep it at or
   * under the provider's SETTINGS_MAX_CONCURRENT_STREAMS (100 or more at the large providers):
   * undici does not lower it to the peer's value, and calls beyond the peer's limit wait for a
   * slot on their connection.
   */
  maxStreamsPerConnection: number;
  /** Certificates (PEM) trusted on top of Node's roots: a private CA (config: with NODE_EXTRA_CA_CERTS's). */
  ca?: string | undefined;
  /** Milliseconds to set up a connection (TCP and TLS). Default 10 s. */
  connectTimeoutMs?: number;
  /** Milliseconds an idle connection is kept for the next call. Default 30 s. */
  keepAliveMs?: number;
}

/** What the dispatcher knows of its origins (tests and metrics read it). */
export interface ModelDispatcherState {
  /** Origins by the protocol their last connection negotiated. */
  protocols(): ReadonlyMap<string, 'h1' | 'h2'>;
  /** Connections set up since the start, by protocol. */
  connections(): { h1: number; h2: number };
}

export type ModelDispatcher = Dispatcher & { readonly state: ModelDispatcherState };

/**
 * The http2 session undici made of a connection's socket: undici 7 keeps it under a symbol of
 * its own and says nothing of the peer's SETTINGS, which bound the streams a connection may open.
 * Without it (another undici), connections carry `maxStreamsPerConnection` from the start.
 */
function http2SessionOf(socket: TLSSocket | undefined): ClientHttp2Session | undefined {
  if (!socket) return undefined;
  const symbol = Object.getOwnPropertySymbols(socket).find((candidate) => candidate.description === 'http2Session');
  const session = symbol ? (socket as unknown as Record<symbol, unknown>)[symbol] : undefined;
  return session && typeof (session as ClientHttp2Session).on === 'function'
    ? (session as ClientHttp2Session)
    : undefined;
}

function isAsyncIterable(body: unknown): body is AsyncIterable<Uint8Array | string> {
  return (
    body !== null &&
    typeof body === 'object' &&
    !Buffer.isBuffer(body) &&
    typeof (body as { pipe?: unknown }).pipe !== 'function' &&
    typeof (body as AsyncIterable<unknown>)[Symbol.asyncIterator] === 'function'
  );
}

async function readBody(body: AsyncIterable<Uint8Array | string>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.from(chunk));
  return Buffer.concat(chunks);
}

/** Fails a request that never reached a connection, whichever handler interface it speaks. */
function failRequest(handler: Dispatcher.DispatchHandler, error: Error): void {
  const legacy = handler as { onError?: (error: Error) => void };
  if (typeof handler.onResponseError === 'function') handler.onResponseError(null as never, error);
  else legacy.onError?.(error);
}

/**
 * A Client that a Pool keeps giving calls while it has fewer than `limit` in flight or queued.
 * undici's own Client reports itself busy while it connects, so a Pool opens one more connection
 * for every call that arrives meanwhile; for an origin known to speak h2 those calls belong on
 * the connection being set up.
 */
class ModelClient extends Client {
  limit = 1;

  override dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    return super.dispatch(options, handler) || this.stats.size < this.limit;
  }
}

export function createModelDispatcher(options: ModelDispatcherOptions): ModelDispatcher {
  const maxStreams = options.maxStreamsPerConnection;
  const keepAliveMs = options.keepAliveMs ?? 30_000;
  const protocols = new Map<string, 'h1' | 'h2'>();
  const connections = { h1: 0, h2: 0 };
  /** The peer's SETTINGS_MAX_CONCURRENT_STREAMS, by origin, as its last h2 connection said. */
  const peerStreams = new Map<string, number>();
  /** Calls to an origin whose protocol is being learned, by origin: run when its first connection is up or failed. */
  const held = new Map<string, Array<() => void>>();

  const connector = buildConnector({
    allowH2: options.http2,
    timeout: options.connectTimeoutMs ?? 10_000,
    // A `ca` replaces Node's roots: they stay trusted beside the private CA.
    ...(options.ca ? { ca: [...rootCertificates, options.ca] } : {}),
  });

  function release(origin: string): void {
    const waiting = held.get(origin);
    if (!waiting) return;
    held.delete(origin);
    for (const run of waiting) run();
  }

  /** The streams a connection to `key` may carry: ours, lowered to what its peer allows (1 until it has said). */
  const streamsFor = (key: string): number => Math.min(maxStreams, peerStreams.get(key) ?? 1);

  function setLimit(client: ModelClient, limit: number): void {
    client.limit = limit;
    client.pipelining = limit;
  }

  function createClient(origin: URL, clientOptions: object): Client {
    const key = origin.origin;
    const limit = protocols.get(key) === 'h2' ? streamsFor(key) : 1;
    let connected: TLSSocket | undefined;
    const client = new ModelClient(origin, {
      ...(clientOptions as Client.Options),
      allowH2: options.http2,
      maxConcurrentStreams: maxStreams,
      pipelining: limit,
      connect: (connectOptions, callback) =>
        connector(connectOptions, (error, socket) => {
          if (error) {
            callback(error, null);
            release(key);
            return;
          }
          connected = socket as TLSSocket;
          callback(null, socket);
        }),
    });
    client.limit = limit;
    // Emitted once the connection's protocol context is set, before any queued call is written.
    client.on('connect', () => {
      const h2 = connected?.alpnProtocol === 'h2';
      connections[h2 ? 'h2' : 'h1'] += 1;
      const session = h2 ? http2SessionOf(connected) : undefined;
      if (!session) {
        protocols.set(key, h2 ? 'h2' : 'h1');
        setLimit(client, h2 ? maxStreams : 1);
        release(key);
        return;
      }
      // Streams opened before the peer's SETTINGS beyond its limit would be refused: until they
      // arrive, a connection carries what the origin's last one allowed (one call at first).
      setLimit(client, streamsFor(key));
      session.on('remoteSettings', (settings: Http2Settings) => {
        // The origin counts as speaking h2 once its limit is known (calls are held until then).
        protocols.set(key, 'h2');
        peerStreams.set(key, settings.maxConcurrentStreams ?? maxStreams);
        setLimit(client, streamsFor(key));
        // After the drain the new limit makes the Pool hear, so the held calls come to this connection.
        queueMicrotask(() => release(key));
      });
    });
    // A connection that closes before its peer's SETTINGS lets the calls waiting for it go.
    client.on('disconnect', () => release(key));
    return client;
  }

  const agent = new Agent({
    keepAliveTimeout: keepAliveMs,
    factory: (origin, poolOptions) =>
      new Pool(origin, { ...(poolOptions as Pool.Options), factory: (url, opts) => createClient(url, opts) }),
  });

  const composed = agent.compose((dispatch) => {
    const send = (opts: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean => {
      if (!isAsyncIterable(opts.body)) return dispatch(opts, handler);
      readBody(opts.body).then(
        (body) => dispatch({ ...opts, body }, handler),
        (error: unknown) => failRequest(handler, error instanceof Error ? error : new Error(String(error))),
      );
      return true;
    };
    return (opts, handler) => {
      const origin = typeof opts.origin === 'string' ? opts.origin : opts.origin?.toString();
      if (!options.http2 || !origin?.startsWith('https:')) return dispatch(opts, handler);
      const key = new URL(origin).origin;
      const call = { ...opts, idempotent: true };
      if (protocols.has(key)) return send(call, handler);
      const waiting = held.get(key);
      if (waiting) {
        waiting.push(() => send(call, handler));
        return true;
      }
      // The first call of an unknown origin opens its first connection; the next ones wait for it.
      held.set(key, []);
      return send(call, handler);
    };
  }) as ModelDispatcher;

  Object.defineProperty(composed, 'state', {
    value: { protocols: () => protocols, connections: () => ({ ...connections }) } satisfies ModelDispatcherState,
  });
  return composed;
}
