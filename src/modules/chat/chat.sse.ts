/**
 * Server-sent events over a hijacked reply: `id: <event id>` / `event: <type>` / `data: <json>`
 * frames (the first one led by `retry: <ms>`, the reconnection delay clients should use), a
 * comment heartbeat, and a callback when the client goes away before the stream ends.
 */
import type { FastifyReply } from 'fastify';
import type { StreamEvent } from './chat.schemas.js';
import { onHeartbeat, startEventStream } from '../../http/sse.js';

export interface EventStream {
  /** The client disconnected before `close`. */
  readonly gone: boolean;
  /**
   * Calls `listener` once when the client disconnects before `close` (one listener). A callback,
   * not an AbortSignal: a signal is ≈ 0.8 KiB of heap, held by every open stream.
   */
  onGone(listener: () => void): void;
  send(event: StreamEvent, id?: string): void;
  close(): void;
}

export function openEventStream(reply: FastifyReply, heartbeatMs: number, retryMs = 0): EventStream {
  // The head goes out with the first event (the caller sends `start` at once): one write, not two.
  const raw = startEventStream(reply);
  let ended = false;
  let gone = false;
  let onGone: (() => void) | null = null;
  let retry = retryMs > 0 ? `retry: ${retryMs}\n` : '';
  const write = (frame: string) => {
    if (ended || raw.destroyed) return;
    raw.write(frame);
    // Node corks the socket on each write until the next tick, and a burst of model tokens
    // parsed in one run of microtasks would hold the first of them back until the last is
    // parsed: each event goes out as it is written.
    raw.socket?.uncork();
  };
  const stopHeartbeat = onHeartbeat(heartbeatMs, () => write(': heartbeat\n\n'));
  raw.on('close', () => {
    stopHeartbeat();
    if (ended || gone) return;
    gone = true;
    onGone?.();
    onGone = null;
  });
  return {
    get gone() {
      return gone;
    },
    onGone(listener) {
      onGone = listener;
    },
    send(event, id) {
      const idLine = id ? `id: ${id}\n` : '';
      write(`${retry}${idLine}event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
      retry = '';
    },
    close() {
      if (ended) return;
      ended = true;
      stopHeartbeat();
      raw.end();
    },
  };
}
