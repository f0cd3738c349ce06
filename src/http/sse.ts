/**
 * Server-sent event streams: the route takes the response over from Fastify and sends the head at
 * once, keeping the headers its hooks set (request id, CORS, rate limits), with caching and proxy
 * buffering off so that each event leaves as it is written.
 */
import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyReply } from 'fastify';

/** Hijacks `reply`, writes a 200 head for `text/event-stream` and returns the socket's response. */
export function startEventStream(reply: FastifyReply): ServerResponse {
  const headers = {
    ...reply.getHeaders(),
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  };
  reply.hijack();
  const raw = reply.raw;
  raw.writeHead(200, headers as Record<string, string>);
  // The head is sent by itself, corked with what this tick writes next (the first event): still
  // one packet. Sent apart rather than prefixed to the first write, the head Node keeps for the
  // response's life (`_header`, a string of ≈ 40 concatenations) is the very string written, which
  // V8 flattens in place: ≈ 1 KiB less per open stream.
  const socket = raw.socket;
  socket?.cork();
  raw.flushHeaders();
  if (socket) process.nextTick(uncork, socket);
  return raw;
}

function uncork(socket: Socket): void {
  socket.uncork();
}

interface Beat {
  timer: NodeJS.Timeout;
  streams: Set<() => void>;
}
const beats = new Map<number, Beat>();

/**
 * Calls `beat` every `everyMs` until the returned function is called. Every stream of one period
 * shares one timer (thousands of open streams hold one interval, not one each), so a stream's
 * first beat comes within `everyMs` of its start rather than exactly `everyMs` after it.
 */
export function onHeartbeat(everyMs: number, beat: () => void): () => void {
  let shared = beats.get(everyMs);
  if (!shared) {
    const streams = new Set<() => void>();
    const timer = setInterval(() => {
      for (const each of streams) each();
    }, everyMs);
    timer.unref();
    shared = { timer, streams };
    beats.set(everyMs, shared);
  }
  const { streams, timer } = shared;
  streams.add(beat);
  return () => {
    if (!streams.delete(beat) || streams.size > 0) return;
    clearInterval(timer);
    if (beats.get(everyMs)?.streams === streams) beats.delete(everyMs);
  };
}
