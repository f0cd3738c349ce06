/**
 * The voice agents family's speech routes: `POST /voice-agents/vendor/voices/{voiceId}/tts` (and
 * the alias `elevenlabs` for `vendor`), audio streamed while it is encoded, and
 * `POST /voice-agents/stt` (multipart `file`, optional `language`). A client that goes away
 * aborts the synthesis (no further sentence is synthesised).
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
import { OUTPUT_FORMATS } from '../../ports/text-to-speech.js';
import { VOICE_SPEED } from './voice-agents.schemas.js';
import type { VoiceSpeechService } from './voice-agents.speech.js';

const errors = errorResponses('detail');
const tags = ['voice-agents'];
const Unit = (description: string) => Type.Optional(Type.Number({ minimum: 0, maximum: 1, description }));

export const TtsParams = Type.Object(
  { voiceId: Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9_.-]+$' }) },
  { additionalProperties: false },
);

export const TtsBody = Type.Object(
  {
    text: Type.String({
      minLength: 1,
      maxLength: 100_000,
      description: 'At most TTS_MAX_TEXT_CHARS (default 5000) characters.',
    }),
    model_id: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    language_code: Type.Optional(Type.String({ pattern: '^[a-z]{2}(-[A-Za-z]{2})?$' })),
    output_format: Type.Optional(Type.String({ maxLength: 40, description: `One of ${OUTPUT_FORMATS.join(', ')}.` })),
    voice_speed: Type.Optional(Type.Number({ ...VOICE_SPEED, description: 'Percent of normal speed, 50 to 200.' })),
    voice_stability: Unit('0.0–1.0; ElevenLabs only'),
    voice_similarity_boost: Unit('0.0–1.0; ElevenLabs only'),
    voice_style: Unit('0.0–1.0; ElevenLabs only'),
  },
  { additionalProperties: false },
);

/** ElevenLabs' query: the format goes there (`?output_format=`); its other query fields are accepted and ignored. */
export const TtsQuery = Type.Object(
  {
    output_format: Type.Optional(
      Type.String({
        maxLength: 40,
        description: `The audio format, as ElevenLabs takes it (the body's output_format also works; both given must agree). One of ${OUTPUT_FORMATS.join(', ')}.`,
        examples: ['pcm_16000'],
      }),
    ),
    enable_logging: Type.Optional(Type.Unknown({ description: 'accepted and ignored (ElevenLabs field)' })),
    optimize_streaming_latency: Type.Optional(Type.Unknown({ description: 'accepted and ignored (ElevenLabs field)' })),
  },
  { additionalProperties: false },
);

/** The format of a request: the query's (ElevenLabs' way) or the body's; both given must agree. */
export function requestedFormat(query: string | undefined, body: string | undefined): string | undefined {
  if (query !== undefined && body !== undefined && query !== body) {
    throw AppErrors.validation(
      `Invalid field 'output_format': the query says ${truncateQuoted(query)} and the body ${truncateQuoted(body)}; give one`,
    );
  }
  return query ?? body;
}

/** The multipart form of `/stt`, for the OpenAPI document (the handler reads the parts itself). */
const SttForm = Type.Object({
  file: Type.String({ format: 'binary', contentMediaType: 'application/octet-stream', description: 'The audio.' }),
  language: Type.Optional(Type.String({ maxLength: 16, description: 'ISO 639-1 code of the speech (a hint).' })),
});

export const Transcript = Type.Object({
  text: Type.String(),
  language: Type.Optional(Type.String()),
  duration_s: Type.Optional(Type.Number()),
});

const Audio = Type.Unsafe<unknown>({
  type: 'string',
  format: 'binary',
  description:
    'audio/mpeg, audio/pcm;rate=N (raw 16-bit little-endian mono), audio/basic, audio/x-alaw-basic, audio/wav (with its real sizes), audio/ogg;codecs=opus',
});

/** An AbortSignal that fires when the client goes away before the answer is complete. */
function disconnectSignal(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  reply.raw.on('close', () => {
    if (!reply.raw.writableFinished) controller.abort();
  });
  return controller.signal;
}

/** The form's `file` and `language`; any other field, a repeated one or NUL is a 400, a file over the cap a 413. */
async function readAudioForm(request: FastifyRequest): Promise<AudioFile | undefined> {
  if (!request.isMultipart())
    throw AppErrors.unsupportedMediaType('Send the audio as multipart/form-data (field file)');
  let file: AudioFile | undefined;
  const seen = new Set<string>();
  try {
    for await (const part of request.parts()) {
      const name = truncateQuoted(part.fieldname);
      const unsafe = findUnsafeInput([part.fieldname, part.type === 'file' ? part.filename : String(part.value)]);
      if (unsafe) throw AppErrors.validation(`Invalid field '${name.replace(/\0/g, '\\0')}': ${unsafe.problem}`);
      if (seen.has(part.fieldname)) throw AppErrors.validation(`Invalid field '${name}': given more than once`);
      seen.add(part.fieldname);
      if (part.type !== 'file') {
        // `language`: engines detect it; the answer says what they heard.
        if (part.fieldname !== 'language')
          throw AppErrors.validation(`Invalid field '${name}': unknown field (the form takes file and language)`);
        if (!/^[A-Za-z]{2,3}([-_][A-Za-z0-9]{2,8})?$/.test(String(part.value)))
          throw AppErrors.validation(`Invalid field 'language': must be a language code such as en or pt-BR`);
        continue;
      }
      if (part.fieldname !== 'file') throw AppErrors.validation(`Invalid field '${name}': only 'file' may be a file`);
      file = { buffer: await part.toBuffer(), filename: part.filename, mimetype: part.mimetype };
    }
  } catch (error) {
    if (error instanceof AppError) throw error;
    const { statusCode, message } = error as { statusCode?: number; message?: string };
    if (statusCode === 413) throw AppErrors.payloadTooLarge("Invalid field 'file': the audio is too large");
    throw AppErrors.validation(`The multipart form could not be read: ${truncateQuoted(message ?? 'unknown error')}`);
  }
  return file;
}

export function voiceSpeechRoutes(speech: VoiceSpeechService): FastifyPluginAsyncTypebox {
  return async (app) => {
    await app.register(fastifyMultipart, {
      limits: { fileSize: speech.maxAudioBytes, files: 1, fields: 5, fieldSize: 1024 },
      throwFileSizeLimit: true,
    });

    for (const vendor of ['vendor', 'elevenlabs'] as const) {
      app.post(
        `/voice-agents/${vendor}/voices/:voiceId/tts`,
        {
          schema: {
            operationId: vendor === 'vendor' ? 'textToSpeech' : 'textToSpeechElevenLabs',
            tags,
            summary: `Text to speech in a voice${vendor === 'elevenlabs' ? ' (alias of …/vendor/…)' : ''}`,
            description: `Streams audio in output_format — in the query as ElevenLabs takes it, or in the body (both given must agree) — default mp3_44100_128, while it is encoded; WAV is sent whole with its real sizes. Formats: ${OUTPUT_FORMATS.join(', ')}; an engine may serve fewer, and any other is refused (the 400 lists them). text: at most TTS_MAX_TEXT_CHARS (default 5000).`,
            params: TtsParams,
            querystring: TtsQuery,
            body: TtsBody,
            response: { 200: Audio, ...errors },
          },
        },
        async (request, reply) => {
          const output_format = requestedFormat(request.query.output_format, request.body.output_format);
          const input = { ...request.body, ...(output_format !== undefined ? { output_format } : {}) };
          const signal = disconnectSignal(reply);
          const audio = await speech.speak(request.params.voiceId, input, signal, companyContext(request));
          reply.code(200).type(audio.contentType);
          return reply.send(audio.bytes ?? Readable.from(audio.body));
        },
      );
    }

    app.post(
      '/voice-agents/stt',
      {
        schema: {
          operationId: 'speechToText',
          tags,
          summary: 'Speech to text (multipart: file, optional language)',
          description:
            'Transcribes the audio `file` with the configured speech-to-text engine (ElevenLabs, an OpenAI-compatible server at STT_URL, or a local Whisper model). No file → 400, not audio or a format the engine cannot read → 415, over CHAT_MAX_AUDIO_BYTES → 413, no engine → 503 naming what to configure. `language` is accepted; the engines detect the language themselves.',
          consumes: ['multipart/form-data'],
          multipartBody: SttForm,
          response: { 200: Transcript, ...errors },
        },
      },
      async (request, reply) => speech.transcribe(await readAudioForm(request), disconnectSignal(reply)),
    );
  };
}
