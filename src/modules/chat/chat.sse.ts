/**
 * Server-sent events over a hijacked reply: `id: <event id>` / `event: <type>` / `data: <json>`
 * frames (the first one led by `retry: <ms>`, the reconnection delay clients should use), a
 * comment heartbeat, and a callback when the client goes away before the stream ends.
 *
 * A class rather than an object of closures: every open stream holds one (thousands at once), and
 * its methods are then shared; a callback rather than an AbortSignal (≈ 0.8 KiB of heap each).
 */
import type { ServerResponse } from 'node:http';
import type { FastifyReply } from 'fastify';
import type { StreamEvent } from './chat.schemas.js';
import { onHeartbeat, startEventStream } from '../../http/sse.js';

export interface EventStream {
  /** The client disconnected before `close`. */
  readonly gone: boolean;
  /** Calls `listener` once when the client disconnects before `close` (one listener). */
  onGone(listener: () => void): void;
  send(event: StreamEvent, id?: string): void;
  close(): void;
}

class SseStream implements EventStream {
  gone = false;
  private ended = false;
  private listener: (() => void) | null = null;
  private readonly stopHeartbeat: () => void;

  constructor(
    private readonly raw: ServerResponse,
    heartbeatMs: number,
    private retry: string,
  ) {
    this.stopHeartbeat = onHeartbeat(heartbeatMs, () => this.write(': heartbeat\n\n'));
    raw.on('close', () => this.closed());
  }

  onGone(listener: () => void): void {
    this.listener = listener;
  }

  send(event: StreamEvent, id?: string): void {
    const idLine = id ? `id: ${id}\n` : '';
    this.write(`${this.retry}${idLine}event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
    this.retry = '';
  }

  close(): void {
    if (this.ended) return;
    this.ended = true;
    this.stopHeartbeat();
    this.raw.end();
  }

  private write(frame: string): void {
    if (this.ended || this.raw.destroyed) return;
    this.raw.write(frame);
    // Node corks the socket on each write until the next tick, and a burst of model tokens
    // parsed in one run of microtasks would hold the first of them back until the last is
    // parsed: each event goes out as it is written.
    this.raw.socket?.uncork();
  }

  /** The connection closed: before `close`, the client is gone. */
  private closed(): void {
    this.stopHeartbeat();
    if (this.ended || this.gone) return;
    this.gone = true;
    const listener = this.listener;
    this.listener = null;
    listener?.();
  }
}

export function openEventStream(reply: FastifyReply, heartbeatMs: number, retryMs = 0): EventStream {
  // The head goes out with the first event (the caller sends `start` at once): one write, not two.
  return new SseStream(startEventStream(reply), heartbeatMs, retryMs > 0 ? `retry: ${retryMs}\n` : '');
}
