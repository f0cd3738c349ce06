/**
 * Errors raised before any route runs, answered in the family's error shape like every other
 * error: the router's (a path that is not valid percent-encoding, a path parameter longer than
 * the router's limit) through Fastify's `frameworkErrors` option, and Node's HTTP parser's
 * (headers over 16 KB, a malformed request, a request that timed out) through
 * `clientErrorHandler`, which writes to the socket itself (the family read from the request line,
 * remembered per connection when the headers arrive in pieces). Nothing sent is quoted whole.
 */
import { STATUS_CODES, type Server } from 'node:http';
import type { Socket } from 'node:net';
import type { ConnectionError, FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { ERROR_NAMES, renderError, shapeForPath, truncateQuoted } from './errors.js';

/** Fastify's default `maxParamLength`; a longer path parameter is refused by the router. */
export const MAX_PARAM_LENGTH = 100;

interface ErrorFields {
  statusCode: number;
  code: string;
  message: string;
}

function describeFrameworkError(error: FastifyError, path: string): ErrorFields {
  switch (error.code) {
    case 'FST_ERR_BAD_URL':
      return {
        statusCode: 400,
        code: 'ValidationError',
        message: `Invalid path '${truncateQuoted(path)}': not valid percent-encoding`,
      };
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return {
        statusCode: 400,
        code: 'ValidationError',
        message: `Invalid path parameter: longer than ${MAX_PARAM_LENGTH} characters`,
      };
    default:
      return { statusCode: 500, code: 'InternalServerError', message: 'Internal server error' };
  }
}

/** Fastify's `frameworkErrors`: router errors, before hooks and handlers, in the family's shape. */
export function handleFrameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const path = request.url.split('?')[0] ?? '';
  const fields = describeFrameworkError(error, path);
  if (fields.statusCode >= 500) request.log.error({ err: error }, 'router error');
  // Router errors skip the request hooks, so the request id is set here.
  void reply.header('x-request-id', request.id);
  void reply.status(fields.statusCode).send(renderError(shapeForPath(request.url), fields, request.url));
}

/** The request target of the request line at the start of `packet`, or null when it does not start with one. */
export function requestLineTarget(packet: unknown): string | null {
  // Node hands the parser's Buffer (Fastify's type says its JSON form).
  if (!Buffer.isBuffer(packet) || packet.length === 0 || packet[0]! < 0x41 || packet[0]! > 0x5a) return null;
  // Only the line is decoded: a remembered target must not hold the whole head's text.
  const end = packet.subarray(0, 8192).indexOf('\r\n');
  const line = packet.toString('latin1', 0, end < 0 ? Math.min(packet.length, 8192) : end);
  return /^[A-Z]+ (\/\S*) HTTP\/\d\.\d$/.exec(line)?.[1] ?? null;
}

function describeClientError(code: string): ErrorFields {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return { statusCode: 431, code: ERROR_NAMES[431]!, message: 'The request headers are larger than 16 KB' };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { statusCode: 408, code: ERROR_NAMES[408]!, message: 'The request was not received in time' };
    default:
      return { statusCode: 400, code: 'BadRequest', message: 'The request is not valid HTTP' };
  }
}

/** The target of the request a socket is receiving (its headers parsed, its body maybe not yet). */
const receiving = new WeakMap<Socket, string>();

/** Called for every request once its headers are in: a body timeout then knows the family. */
export function rememberTarget(socket: Socket, url: string): void {
  receiving.set(socket, url);
}

/** The target of the last request line each connection sent (its headers maybe still arriving). */
const lastLine = new WeakMap<Socket, string>();

/**
 * Remembers the request line of each request as it arrives, so that headers too large for the
 * parser (431), which fail in a later packet than the request line when they come in pieces,
 * are still answered in the family's shape of their path.
 */
export function watchRequestLines(server: Server): void {
  server.on('connection', (socket: Socket) => {
    socket.on('data', (chunk: Buffer) => {
      const target = requestLineTarget(chunk);
      if (target !== null) lastLine.set(socket, target);
    });
  });
}

/**
 * Fastify's `clientErrorHandler` (Node's 'clientError'): the parser failed, so there is no
 * request object; the family is read from the request line when the packet starts with it, or,
 * for a body that did not arrive in time, from the request whose headers came.
 */
export function handleClientError(error: ConnectionError, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const fields = describeClientError(error.code);
  const remembered = error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? receiving.get(socket) : undefined;
  const target = remembered ?? requestLineTarget(error.rawPacket) ?? lastLine.get(socket) ?? '/';
  const body = JSON.stringify(renderError(shapeForPath(target), fields, target));
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const head = [
    `HTTP/1.1 ${fields.statusCode} ${STATUS_CODES[fields.statusCode] ?? 'Error'}`,
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Connection: close',
  ].join('\r\n');
  socket.end(`${head}\r\n\r\n${body}`, () => socket.destroy());
}
