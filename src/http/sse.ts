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
