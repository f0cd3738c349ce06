/**
 * OpenAI's audio routes: `POST /v1/audio/speech` (JSON, audio streamed back) and
 * `POST /v1/audio/transcriptions` (multipart `file`, `model`, optional `language`, `prompt`,
 * `response_format`, `temperature`; anything else is a 400 naming it). Errors in OpenAI's shape.
 */
import { Readable } from 'node:stream';
import fastifyMultipart from '@fastify/multipart';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { chatCaller } from '../../http/auth.js';
import { AppError, AppErrors, errorResponses, truncateQuoted } from '../../http/errors.js';
import type { AudioFile } from '../../ports/speech.js';
import type { OpenAiAudio, TranscriptionFields } from './openai-api.audio.js';
import { SpeechBody, Transcription, TranscriptionForm } from './openai-api.audio.schemas.js';
import { clientGone } from './openai-api.stream.js';

const tags = ['openai'];
const errors = errorResponses('openai', [400, 401, 413, 415, 429, 500, 502, 503]);
const FIELDS = new Set(['model', 'language', 'prompt', 'response_format', 'temperature']);

const Audio = Type.Unsafe<unknown>({
  type: 'string',
  format: 'binary',
  description: 'audio/mpeg, audio/ogg;codecs=opus, audio/wav or audio/pcm;rate=24000 by response_format',
});

async function readForm(request: FastifyRequest): Promise<{ file?: AudioFile; fields: TranscriptionFields }> {
  if (!request.isMultipart())
    throw AppErrors.unsupportedMediaType('Send the audio as multipart/form-data (field file)');
  let file: AudioFile | undefined;
  const fields: Record<string, string> = {};
  try {
    for await (const part of request.parts()) {
      if (part.type === 'file') {
        if (part.fieldname !== 'file')
          throw AppErrors.validation(`Invalid field '${truncateQuoted(part.fieldname)}': only 'file' may be a file`);
        file = { buffer: await part.toBuffer(), filename: part.filename, mimetype: part.mimetype };
        continue;
      }
      if (!FIELDS.has(part.fieldname))
        throw AppErrors.validation(`Invalid field '${truncateQuoted(part.fieldname)}': not a field of transcriptions`);
      const value = String(part.value);
      if (value.includes('\0')) throw AppErrors.validation(`Invalid field '${part.fieldname}': contains a NUL byte`);
      fields[part.fieldname] = value;
    }
  } catch (error) {
    if (error instanceof AppError) throw error;
    const { statusCode, message } = error as { statusCode?: number; message?: string };
    if (statusCode === 413) throw AppErrors.payloadTooLarge("Invalid field 'file': the audio is too large");
    throw AppErrors.validation(`The multipart form could not be read: ${truncateQuoted(message ?? 'unknown error')}`);
  }
  if (!fields.model?.trim()) throw AppErrors.validation("Invalid field 'model': required");
  return { ...(file ? { file } : {}), fields: fields as unknown as TranscriptionFields };
}

export function openAiAudioRoutes(audio: OpenAiAudio, maxAudioBytes: number): FastifyPluginAsyncTypebox {
  return async (app) => {
    await app.register(fastifyMultipart, {
      limits: { fileSize: maxAudioBytes, files: 1, fields: FIELDS.size, fieldSize: 8192 },
      throwFileSizeLimit: true,
    });

    app.post(
      '/audio/speech',
      {
        schema: {
          operationId: 'openAiCreateSpeech',
          tags,
          summary: 'Text to speech in OpenAI’s protocol (what the SDKs’ audio.speech.create sends)',
          description:
            'Speaks `input` with `voice` — a voice agent of your company (its voice and settings) or a catalog voice — in `response_format` mp3 (default), opus, wav or pcm; aac and flac are refused with the served list. The audio streams while it is encoded (WAV is sent whole with its real sizes). `model` and `instructions` are accepted and not used; `speed` 0.25–4. An unknown voice → 400 naming `voice`; no engine → 503; a full synthesis pool → 503 with Retry-After.',
          body: SpeechBody,
          produces: ['audio/mpeg', 'audio/ogg', 'audio/wav', 'audio/pcm'],
          response: { 200: Audio, ...errors },
        },
      },
      async (request, reply) => {
        const spoken = await audio.speech(chatCaller(request), request.body, clientGone(reply));
        reply.code(200).type(spoken.contentType);
        return reply.send(spoken.bytes ?? Readable.from(spoken.body));
      },
    );

    app.post(
      '/audio/transcriptions',
      {
        schema: {
          operationId: 'openAiCreateTranscription',
          tags,
          summary: 'Speech to text in OpenAI’s protocol (what the SDKs’ audio.transcriptions.create sends)',
          description:
            'Transcribes the multipart `file` with the configured speech-to-text engine (the speech port: ElevenLabs, a server at STT_URL, or a local Whisper model). `model` is required and not used; `response_format` json (default, `{text}`), text (text/plain) or verbose_json (task, language, duration for WAV, text); srt and vtt are refused. No file → 400, not audio → 415, over CHAT_MAX_AUDIO_BYTES → 413, no engine → 503.',
          consumes: ['multipart/form-data'],
          multipartBody: TranscriptionForm,
          response: { 200: Transcription, ...errors },
        },
      },
      async (request, reply) => {
        chatCaller(request); // a 401 before the upload is read
        const form = await readForm(request);
        const result = await audio.transcribe(form.file, form.fields, clientGone(reply));
        if (result.kind === 'text')
          return reply
            .code(200)
            .type('text/plain; charset=utf-8')
            .send(result.text as never);
        return reply.code(200).send(result.body);
      },
    );
  };
}
