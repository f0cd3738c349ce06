/**
 * Server-sent event streams: the route takes the response over from Fastify and sends the head at
 * once, keeping the headers its hooks set (request id, CORS, rate limits), with caching and proxy
 * buffering off so that each event leaves as it is written.
 */
import type { ServerResponse } from 'node:http';
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
  reply.raw.writeHead(200, headers as Record<string, string>);
  return reply.raw;
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
