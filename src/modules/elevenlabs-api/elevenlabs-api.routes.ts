/**
 * `/elevenlabs`: speech in ElevenLabs' protocol, so that its official SDKs work with
 * `baseUrl: <service>/elevenlabs` and an API key as `xi-api-key`. Text to speech (whole and
 * `/stream`: the same streamed body), voices (v1, v2 with pages, one), models, speech to text.
 */
import { Readable } from 'node:stream';
import fastifyMultipart from '@fastify/multipart';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { companyContext } from '../../http/auth.js';
import { AppError, AppErrors, errorResponses, truncateQuoted } from '../../http/errors.js';
import { findUnsafeInput } from '../../http/validation.js';
import type { AudioFile } from '../../ports/speech.js';
import type { ElevenLabsApi } from './elevenlabs-api.service.js';
import {
  ModelObject,
  SttForm,
  Transcript,
  TtsBody,
  TtsQuery,
  Voice,
  VoiceIdParams,
  VoicesV1,
  VoicesV2,
  VoicesV2Query,
} from './elevenlabs-api.schemas.js';

const tags = ['elevenlabs'];
const errors = errorResponses('elevenlabs', [400, 401, 404, 413, 415, 429, 500, 502, 503]);
const readErrors = errorResponses('elevenlabs', [401, 429, 500]);

/** The fields of ElevenLabs' speech-to-text form this service accepts (the engine transcribes; the rest are hints). */
const STT_FIELDS = new Set([
  'model_id',
  'language_code',
  'tag_audio_events',
  'num_speakers',
  'timestamps_granularity',
  'diarize',
  'diarization_threshold',
  'file_format',
  'temperature',
  'seed',
  'use_multi_channel',
  'enable_logging',
  'keyterms',
]);

const Audio = Type.Unsafe<unknown>({
  type: 'string',
  format: 'binary',
  description: 'audio/mpeg, audio/pcm;rate=N, audio/basic, audio/x-alaw-basic or audio/wav, by output_format',
});

function disconnectSignal(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  reply.raw.on('close', () => {
    if (!reply.raw.writableFinished) controller.abort();
  });
  return controller.signal;
}

/** The form's `file` and its fields; unknown fields, a second file or a URL to fetch → 400. */
async function readSttForm(request: FastifyRequest): Promise<AudioFile | undefined> {
  if (!request.isMultipart())
    throw AppErrors.unsupportedMediaType('Send the audio as multipart/form-data (field file)');
  let file: AudioFile | undefined;
  let model = false;
  try {
    for await (const part of request.parts()) {
      if (part.type === 'file') {
        if (findUnsafeInput([part.fieldname, part.filename]))
          throw AppErrors.validation("Invalid field 'file': its name or file name must not contain NUL characters");
        if (part.fieldname !== 'file')
          throw AppErrors.validation(`Invalid field '${truncateQuoted(part.fieldname)}': only 'file' may be a file`);
        file = { buffer: await part.toBuffer(), filename: part.filename, mimetype: part.mimetype };
        continue;
      }
      if (!STT_FIELDS.has(part.fieldname)) {
        throw AppErrors.validation(
          `Invalid field '${truncateQuoted(part.fieldname)}': not accepted (send the audio as file; cloud_storage_url and webhooks are not supported)`,
        );
      }
      if (typeof part.value === 'string' && part.value.includes('\u0000'))
        throw AppErrors.validation(`Invalid field '${part.fieldname}': must not contain NUL bytes`);
      if (part.fieldname === 'model_id') model = true;
    }
  } catch (error) {
    if (error instanceof AppError) throw error;
    const { statusCode, message } = error as { statusCode?: number; message?: string };
    if (statusCode === 413) throw AppErrors.payloadTooLarge("Invalid field 'file': the audio is too large");
    throw AppErrors.validation(`The multipart form could not be read: ${truncateQuoted(message ?? 'unknown error')}`);
  }
  if (!model) throw AppErrors.validation("Invalid field 'model_id': is required (e.g. scribe_v1)");
  return file;
}

export function elevenLabsRoutes(api: ElevenLabsApi): FastifyPluginAsyncTypebox {
  return async (app) => {
    await app.register(fastifyMultipart, {
      limits: { fileSize: api.maxAudioBytes, files: 1, fields: 20, fieldSize: 4096 },
      throwFileSizeLimit: true,
    });

    for (const stream of [false, true]) {
      app.post(
        `/v1/text-to-speech/:voice_id${stream ? '/stream' : ''}`,
        {
          schema: {
            operationId: stream ? 'elevenLabsTextToSpeechStream' : 'elevenLabsTextToSpeech',
            tags,
            summary: `Text to speech in ElevenLabs' protocol${stream ? ' (streamed)' : ''}`,
            description:
              'ElevenLabs’ request (output_format in the query, voice_settings nested, xi-api-key); the audio streams while it is encoded in both forms. The voice is a catalog voice (GET /elevenlabs/v1/voices) or, with the ElevenLabs engine, any of its voices.',
            params: VoiceIdParams,
            querystring: TtsQuery,
            body: TtsBody,
            response: { 200: Audio, ...errors },
          },
        },
        async (request, reply) => {
          const { voice_id: voiceId } = request.params;
          const scope = companyContext(request);
          const audio = await api.speak(voiceId, request.query, request.body, disconnectSignal(reply), scope);
          return reply
            .code(200)
            .type(audio.contentType)
            .send(audio.bytes ?? Readable.from(audio.body));
        },
      );
    }

    app.get(
      '/v1/voices',
      {
        schema: {
          operationId: 'elevenLabsListVoices',
          tags,
          summary: "The voices, in ElevenLabs' v1 shape",
          description: 'The curated catalog as ElevenLabs voices (labels: gender, accent, languages).',
          response: { 200: VoicesV1, ...readErrors },
        },
      },
      async () => ({ voices: api.voices() }),
    );

    app.get(
      '/v2/voices',
      {
        schema: {
          operationId: 'elevenLabsSearchVoices',
          tags,
          summary: "A page of voices, in ElevenLabs' v2 shape",
          description:
            'The catalog filtered by search (name, description, labels) and category, page_size at a time; next_page_token continues.',
          querystring: VoicesV2Query,
          response: { 200: VoicesV2, ...errorResponses('elevenlabs', [400, 401, 429, 500]) },
        },
      },
      async (request) => api.voicesPage(request.query),
    );

    app.get(
      '/v1/voices/:voice_id',
      {
        schema: {
          operationId: 'elevenLabsGetVoice',
          tags,
          summary: 'One voice',
          description: 'A catalog voice by id; any other id is a 404 in ElevenLabs’ shape.',
          params: VoiceIdParams,
          response: { 200: Voice, ...errorResponses('elevenlabs', [400, 401, 404, 429, 500]) },
        },
      },
      async (request) => api.voice(request.params.voice_id),
    );

    app.get(
      '/v1/models',
      {
        schema: {
          operationId: 'elevenLabsListModels',
          tags,
          summary: 'The text-to-speech engine in force, as ElevenLabs models',
          description:
            'One model: the configured engine (espeak-ng offline, ElevenLabs or an OpenAI speech server) with the catalog’s languages; empty without an engine.',
          response: { 200: Type.Array(ModelObject), ...readErrors },
        },
      },
      async () => api.models(),
    );

    app.post(
      '/v1/speech-to-text',
      {
        schema: {
          operationId: 'elevenLabsSpeechToText',
          tags,
          summary: "Speech to text in ElevenLabs' protocol (multipart: model_id, file)",
          description:
            'Transcribes `file` with the configured speech-to-text engine; `model_id` is required as ElevenLabs asks and the engine in force transcribes. Words carry no timings.',
          consumes: ['multipart/form-data'],
          multipartBody: SttForm,
          response: { 200: Transcript, ...errors },
        },
      },
      async (request, reply) => api.transcribe(await readSttForm(request), disconnectSignal(reply)),
    );
  };
}
