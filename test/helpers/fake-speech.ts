/**
 * A local HTTP server that answers like the two speech-to-text protocols the service speaks:
 * ElevenLabs (`POST /v1/speech-to-text`, `xi-api-key`, multipart `file` + `model_id` →
 * `{ language_code, language_probability, text, words }`) and OpenAI's transcriptions
 * (`POST /v1/audio/transcriptions`, bearer key, multipart `file` + `model` → `{ text }`).
 * It parses the real multipart body; what it "hears" is the transcript registered for the
 * file's bytes (`hear`), and silence otherwise. Each request is recorded; the test may script a
 * failure or a delay, and sees requests whose client went away.
 */
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SpeechRequest {
  protocol: 'elevenlabs' | 'openai';
  credential: string | null;
  fields: Record<string, string>;
  file: { name: string; type: string; size: number } | null;
}

export interface SpeechScript {
  /** Answer with this status and the protocol's error body. */
  status?: number;
  message?: string;
  /** Milliseconds before answering. */
  delayMs?: number;
}

export interface FakeSpeech {
  url: string;
  apiKey: string;
  requests: SpeechRequest[];
  /** Requests whose client went away before the answer. */
  aborted: number;
  /** Registers what the peer hears in this audio file. */
  hear(audio: Uint8Array, transcript: string, language?: string): void;
  script: (request: SpeechRequest) => SpeechScript;
  close(): Promise<void>;
}

const digest = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

async function readForm(request: IncomingMessage): Promise<FormData> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const body = Buffer.concat(chunks);
  return new Request('http://peer.local/', {
    method: 'POST',
    headers: { 'content-type': request.headers['content-type'] ?? '' },
    body,
  }).formData();
}

function errorBody(protocol: SpeechRequest['protocol'], status: number, message: string): string {
  if (protocol === 'openai') return JSON.stringify({ error: { message, type: 'invalid_request_error', code: null } });
  if (status === 422) return JSON.stringify({ detail: [{ loc: ['body', 'file'], msg: message, type: 'value_error' }] });
  return JSON.stringify({ detail: { status: 'error', message } });
}

export async function startFakeSpeech(apiKey = 'xi-test-key-0123456789'): Promise<FakeSpeech> {
  const heard = new Map<string, { text: string; language: string }>();
  const fake: FakeSpeech = {
    url: '',
    apiKey,
    requests: [],
    aborted: 0,
    hear: (audio, transcript, language = 'eng') => void heard.set(digest(audio), { text: transcript, language }),
    script: () => ({}),
    close: async () => undefined,
  };
  const server: Server = createServer(async (request, response) => {
    const protocol =
      request.url === '/v1/speech-to-text'
        ? 'elevenlabs'
        : request.url === '/v1/audio/transcriptions'
          ? 'openai'
          : null;
    const send = (status: number, body: string) => {
      if (response.destroyed) return;
      response.writeHead(status, { 'content-type': 'application/json' }).end(body);
    };
    if (request.method !== 'POST' || !protocol) return send(404, JSON.stringify({ detail: 'Not Found' }));
    let gone = false;
    response.on('close', () => {
      if (!response.writableEnded) {
        gone = true;
        fake.aborted++;
      }
    });
    const credential =
      protocol === 'elevenlabs'
        ? ((request.headers['xi-api-key'] as string | undefined) ?? null)
        : (request.headers.authorization?.replace(/^Bearer /, '') ?? null);
    let form: FormData;
    try {
      form = await readForm(request);
    } catch {
      return send(400, errorBody(protocol, 400, 'The request body is not a multipart form'));
    }
    const fields: Record<string, string> = {};
    let file: File | null = null;
    for (const [name, value] of form) {
      if (typeof value === 'string') fields[name] = value;
      else if (name === 'file') file = value;
    }
    const recorded: SpeechRequest = {
      protocol,
      credential,
      fields,
      file: file ? { name: file.name, type: file.type, size: file.size } : null,
    };
    fake.requests.push(recorded);
    const script = fake.script(recorded);
    if (script.delayMs) await new Promise((resolve) => setTimeout(resolve, script.delayMs));
    if (gone) return;
    if (credential !== apiKey) {
      return send(
        401,
        errorBody(protocol, 401, protocol === 'elevenlabs' ? 'Invalid API key' : 'Incorrect API key provided'),
      );
    }
    const model = protocol === 'elevenlabs' ? fields.model_id : fields.model;
    if (!model)
      return send(422, errorBody(protocol, 422, `${protocol === 'elevenlabs' ? 'model_id' : 'model'}: Field required`));
    if (!file) return send(422, errorBody(protocol, 422, 'file: Field required'));
    if (script.status)
      return send(script.status, errorBody(protocol, script.status, script.message ?? 'scripted failure'));
    const bytes = new Uint8Array(await file.arrayBuffer());
    const transcript = heard.get(digest(bytes)) ?? { text: '', language: 'eng' };
    if (protocol === 'openai') return send(200, JSON.stringify({ text: transcript.text }));
    const words = transcript.text
      .split(/\s+/)
      .filter(Boolean)
      .map((text, i) => ({ text, start: i * 0.4, end: i * 0.4 + 0.3, type: 'word', speaker_id: 'speaker_0' }));
    return send(
      200,
      JSON.stringify({ language_code: transcript.language, language_probability: 0.98, text: transcript.text, words }),
    );
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  fake.close = async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return fake;
}

/** A short mono 16-bit PCM WAV whose samples depend on `seed`, so each file has its own bytes. */
export function toneWav(seed: number, milliseconds = 200, sampleRate = 16_000): Uint8Array {
  const frames = Math.round((sampleRate * milliseconds) / 1000);
  const buffer = Buffer.alloc(44 + frames * 2);
  buffer.write('RIFF', 0, 'latin1');
  buffer.writeUInt32LE(36 + frames * 2, 4);
  buffer.write('WAVEfmt ', 8, 'latin1');
  buffer.writeUInt32LE(16, 16);
  buffer.writeUInt16LE(1, 20);
  buffer.writeUInt16LE(1, 22);
  buffer.writeUInt32LE(sampleRate, 24);
  buffer.writeUInt32LE(sampleRate * 2, 28);
  buffer.writeUInt16LE(2, 32);
  buffer.writeUInt16LE(16, 34);
  buffer.write('data', 36, 'latin1');
  buffer.writeUInt32LE(frames * 2, 40);
  for (let i = 0; i < frames; i++)
    buffer.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * (220 + seed * 20) * i) / sampleRate)), 44 + i * 2);
  return new Uint8Array(buffer);
}
