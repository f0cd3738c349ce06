/**
 * A local server that answers like OpenAI's speech protocol (`POST /v1/audio/speech`, bearer key,
 * JSON `{ model, input, voice, response_format, speed }`): it checks the key and the body and
 * streams "audio" back in three chunks. Errors in the protocol's shape
 * `{ error: { message, type, code } }`: 401 invalid_api_key, 400 invalid_request_error, or a
 * scripted 429 / hang.
 */
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { peerAudio, readJson, streamChunks, type FakeTtsPeer, type TtsFault } from './fake-elevenlabs-tts.js';

const RESPONSE_FORMATS = ['mp3', 'opus', 'aac', 'flac', 'wav', 'pcm'];

export async function startFakeOpenAiSpeech(apiKey = 'sk-tts-key-0123456789'): Promise<FakeTtsPeer> {
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
    const auth = request.headers.authorization ?? null;
    const credential = auth?.startsWith('Bearer ') ? auth.slice(7) : null;
    peer.requests.push({ path: url.pathname, query: url.searchParams, credential, body });
    const error = (status: number, type: string, code: string | null, message: string) => {
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ error: { message, type, code } }));
    };
    const fault = faults.shift();
    if (fault?.kind === 'hang') return;
    if (fault) return error(fault.status, fault.code, fault.code, fault.message);
    if (request.method !== 'POST' || url.pathname !== '/v1/audio/speech')
      return error(404, 'not_found', null, 'Not found');
    if (credential !== apiKey)
      return error(401, 'invalid_request_error', 'invalid_api_key', 'Incorrect API key provided');
    if (
      typeof body.input !== 'string' ||
      !body.input ||
      typeof body.model !== 'string' ||
      typeof body.voice !== 'string'
    ) {
      return error(400, 'invalid_request_error', null, 'model, input and voice are required');
    }
    if (!RESPONSE_FORMATS.includes(String(body.response_format ?? 'mp3'))) {
      return error(400, 'invalid_request_error', null, `Invalid response_format ${String(body.response_format)}`);
    }
    response.writeHead(200, { 'content-type': body.response_format === 'pcm' ? 'audio/pcm' : 'audio/mpeg' });
    await streamChunks(response, peerAudio(body.input));
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
