/**
 * A local server that answers like ElevenLabs text to speech
 * (`POST /v1/text-to-speech/{voice_id}/stream?output_format=…`, header `xi-api-key`, JSON body
 * `{ text, model_id, language_code?, voice_settings }`; `GET /v1/voices`): it checks the key, the body and the format,
 * and streams "audio" back in three chunks; it knows the voices in `voices`. Errors in the
 * vendor's shape `{ detail: { status, message } }`: 401 invalid_api_key, 404 voice_not_found,
 * 422 validation, or a scripted 429 / hang.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { OUTPUT_FORMATS } from '../../src/ports/text-to-speech.js';

export interface TtsPeerRequest {
  path: string;
  query: URLSearchParams;
  credential: string | null;
  body: Record<string, unknown>;
}

export type TtsFault = { kind: 'status'; status: number; code: string; message: string } | { kind: 'hang' };

export interface FakeTtsPeer {
  url: string;
  apiKey: string;
  requests: TtsPeerRequest[];
  /** The next request gets this fault. */
  fail(fault: TtsFault): void;
  close(): Promise<void>;
}

export async function readJson(request: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
  } catch {
    return {};
  }
}

/** The audio a peer streams for `text`: three chunks whose bytes spell the text. */
export function peerAudio(text: string): Buffer[] {
  const bytes = Buffer.from(`AUDIO:${text}`);
  const third = Math.ceil(bytes.length / 3);
  return [bytes.subarray(0, third), bytes.subarray(third, 2 * third), bytes.subarray(2 * third)];
}

export async function streamChunks(response: ServerResponse, chunks: Buffer[]) {
  for (const chunk of chunks) {
    if (response.destroyed) return;
    response.write(chunk);
    await new Promise((resolve) => setImmediate(resolve));
  }
  response.end();
}

export async function startFakeElevenLabsTts(
  apiKey = 'xi-tts-key-0123456789',
  voices = ['21m00Tcm4TlvDq8ikWAM'],
): Promise<FakeTtsPeer> {
  const faults: TtsFault[] = [];
  const peer: FakeTtsPeer = {
    url: '',
    apiKey,
    requests: [],
    fail: (fault) => void faults.push(fault),
    close: async () => {},
  };
  const server = createServer(async (request, response) => {
    const url = new URL(request.url ?? '/', 'http://peer.local');
    const body = await readJson(request);
    const credential = (request.headers['xi-api-key'] as string | undefined) ?? null;
    peer.requests.push({ path: url.pathname, query: url.searchParams, credential, body });
    const error = (status: number, code: string, message: string) => {
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ detail: { status: code, message } }));
    };
    const fault = faults.shift();
    if (fault?.kind === 'hang') return;
    if (fault) return error(fault.status, fault.code, fault.message);
    if (request.method === 'GET' && url.pathname === '/v1/voices') {
      if (credential !== apiKey) return error(401, 'invalid_api_key', 'Invalid API key');
      response.writeHead(200, { 'content-type': 'application/json' });
      return response.end(
        JSON.stringify({ voices: voices.map((id) => ({ voice_id: id, name: id, category: 'premade' })) }),
      );
    }
    const match = /^\/v1\/text-to-speech\/([^/]+)\/stream$/.exec(url.pathname);
    if (request.method !== 'POST' || !match) return error(404, 'not_found', 'Not found');
    if (credential !== apiKey) return error(401, 'invalid_api_key', 'Invalid API key');
    if (!voices.includes(decodeURIComponent(match[1]!)))
      return error(404, 'voice_not_found', 'A voice with the voice_id was not found.');
    const format = url.searchParams.get('output_format') ?? 'mp3_44100_128';
    const settings = body.voice_settings as Record<string, unknown> | undefined;
    if (typeof body.text !== 'string' || !body.text || typeof body.model_id !== 'string') {
      return error(422, 'invalid_request', 'text and model_id are required');
    }
    if (
      !(OUTPUT_FORMATS as readonly string[]).includes(format) ||
      !settings ||
      typeof settings.stability !== 'number'
    ) {
      return error(422, 'invalid_request', 'Invalid output_format or voice_settings');
    }
    response.writeHead(200, { 'content-type': format.startsWith('mp3') ? 'audio/mpeg' : 'application/octet-stream' });
    await streamChunks(response, peerAudio(body.text));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  peer.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  peer.close = async () => {
    server.closeAllConnections();
    server.close();
    await once(server, 'close');
  };
  return peer;
}
