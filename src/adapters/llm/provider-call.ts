/**
 * One streamed call to a model provider, dispatched to undici with a handler of our own: the
 * answer's bytes go straight from the connection into the SSE parser and the protocol's reader,
 * and the parts they make wait in one array until the reply's consumer takes them.
 *
 * `undici.request` would put a Node Readable, its async iterator, end-of-stream listeners, a
 * request handler and the response's raw headers between the connection and the parser, all held
 * for the whole reply: with thousands of replies held open by slow models that is most of what an
 * open stream costs (docs/decisions.md, "The model client's handler"). Back-pressure is the
 * controller's: the connection is paused while more than `MAX_QUEUED` parts wait.
 */
import type { Dispatcher } from 'undici';
import { LlmError, type LlmStreamPart, type LlmUsage } from '../../ports/llm.js';
import type { LlmErrors } from './llm-errors.js';
import type { StreamReader } from './protocol.js';
import { SseParser } from './sse.js';

/** Parts waiting for the consumer past which the connection stops reading. */
const MAX_QUEUED = 64;
/** What `take` returns while nothing new has been read (never written to). */
const NONE: LlmStreamPart[] = [];
/** The most of an error body kept (a provider's error is a few hundred bytes). */
const ERROR_BODY_LIMIT = 64 * 1024;

/** A request's JSON in a buffer of its own: a pooled slice would hold an 8 KiB slab for the whole reply. */
export function ownBuffer(text: string): Buffer {
  const bytes = Buffer.allocUnsafeSlow(Buffer.byteLength(text));
  bytes.write(text);
  return bytes;
}

export class ProviderCall implements Dispatcher.DispatchHandler {
  private controller: Dispatcher.DispatchController | null = null;
  private status = 0;
  private parser: SseParser | null = null;
  /** Parts read and not taken yet. */
  private parts: LlmStreamPart[] = [];
  /** The body of an answer other than 2xx, kept to name the failure. */
  private errorBody: Buffer[] | null = null;
  private errorBytes = 0;
  private failure: unknown = null;
  /** The answer ended, failed or was abandoned: nothing more will be read. */
  private done = false;
  /** The answer ended cleanly (the connection may be reused). */
  private complete = false;
  /** The tokens the provider reported, once the answer ended cleanly. */
  usage: LlmUsage | null = null;
  private waiting: (() => void) | null = null;
  private readonly onAbort = () => this.stop(this.signal.reason);

  constructor(
    private readonly signal: AbortSignal,
    private readonly reader: StreamReader,
    private readonly errors: LlmErrors,
  ) {}

  /** Sends the request; its answer is then read by `take`. */
  start(dispatcher: Dispatcher, options: Dispatcher.DispatchOptions): void {
    if (this.signal.aborted) {
      this.done = true;
      return;
    }
    this.signal.addEventListener('abort', this.onAbort, { once: true });
    dispatcher.dispatch(options, this);
  }

  /**
   * The parts read since the last call — none yet (an empty array: wait for `arrival`) — or null
   * when the answer is over (or the signal aborted). Throws the call's LlmError after the parts
   * before it. Not async: a consumer waiting for a slow model holds one promise (`arrival`), not
   * also this method's suspended frame.
   */
  take(): LlmStreamPart[] | null {
    if (this.signal.aborted) return null;
    if (this.parts.length) {
      const parts = this.parts;
      this.parts = [];
      if (this.controller?.paused && !this.done) this.controller.resume();
      return parts;
    }
    if (this.failure) throw this.failure instanceof LlmError ? this.failure : this.errors.brokenStream(this.failure);
    if (this.done) return null;
    return NONE;
  }

  /** Settles when parts arrive, the answer ends or the signal aborts (then `take` again). */
  arrival(): Promise<void> {
    return new Promise<void>((resolve) => (this.waiting = resolve));
  }

  /** The consumer is gone: a reply not read to its end is aborted, and its connection not reused. */
  close(): void {
    this.signal.removeEventListener('abort', this.onAbort);
    if (!this.complete) this.stop(new Error('the reply was abandoned'));
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.done && !this.complete) controller.abort(new Error('the reply was abandoned'));
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number): void {
    // undici's controller keeps the head's raw headers for the whole reply: a Buffer per name and
    // value, each a view that holds the connection's first read alive. Nothing here reads them.
    controller.rawHeaders = null;
    if (statusCode < 200) return; // informational: the answer's own status follows
    this.status = statusCode;
    if (statusCode >= 200 && statusCode <= 299)
      this.parser = new SseParser((event, data) => this.reader.event(event, data, this.parts));
    else this.errorBody = [];
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.done) return;
    if (this.errorBody) {
      this.errorBody.push(chunk);
      this.errorBytes += chunk.length;
      // What arrived is enough to name the failure.
      if (this.errorBytes >= ERROR_BODY_LIMIT) this.fail(this.errorFromBody(), controller);
      return;
    }
    try {
      this.parser!.push(chunk);
    } catch (error) {
      // An error event: the parts before it go out first, then the failure; the connection closes.
      this.fail(error, controller);
      return;
    }
    if (this.parts.length > MAX_QUEUED) controller.pause();
    this.wake();
  }

  onResponseEnd(): void {
    if (this.done) return;
    if (this.errorBody) {
      this.finish(this.errorFromBody());
      return;
    }
    try {
      this.parser!.end();
      this.usage = this.reader.end(this.parts);
      this.complete = true;
      this.finish(null);
    } catch (error) {
      this.finish(error);
    }
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    if (this.done) return;
    if (this.status === 0) this.finish(this.errors.noResponse(error));
    else if (this.errorBody) this.finish(this.errorFromBody());
    else this.finish(this.errors.brokenStream(error));
  }

  private errorFromBody() {
    const body = Buffer.concat(this.errorBody!);
    this.errorBody = null;
    return this.errors.fromBody(this.status, body);
  }

  private fail(error: unknown, controller: Dispatcher.DispatchController): void {
    this.finish(error);
    controller.abort(error instanceof Error ? error : new Error(String(error)));
  }

  private finish(failure: unknown): void {
    this.done = true;
    this.failure = failure;
    this.parser = null;
    this.signal.removeEventListener('abort', this.onAbort);
    this.wake();
  }

  /** Aborts the call: the connection closes, the consumer wakes to an empty end. */
  private stop(reason: unknown): void {
    if (this.done) {
      this.wake();
      return;
    }
    this.finish(null);
    this.controller?.abort(reason instanceof Error ? reason : new Error(String(reason)));
  }

  private wake(): void {
    const waiting = this.waiting;
    this.waiting = null;
    waiting?.();
  }
}
