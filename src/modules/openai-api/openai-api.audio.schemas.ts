/** Schemas of OpenAI's audio routes (`/v1/audio/speech`, `/v1/audio/transcriptions`). */
import { Type, type Static } from '@sinclair/typebox';

export const SpeechBody = Type.Object(
  {
    model: Type.String({
      minLength: 1,
      maxLength: 100,
      description:
        'OpenAI’s speech model name (tts-1, tts-1-hd, gpt-4o-mini-tts…): accepted; the configured engine speaks.',
      examples: ['tts-1'],
    }),
    input: Type.String({
      minLength: 1,
      maxLength: 4096,
      description: 'The text to speak: at most 4096 characters (and TTS_MAX_TEXT_CHARS).',
      examples: ['Your order has shipped.'],
    }),
    voice: Type.String({
      minLength: 1,
      maxLength: 100,
      pattern: '^[A-Za-z0-9_.-]+$',
      description:
        'A voice agent id of your company (its voice and settings) or a voice id of the catalog (GET /api/public/voice-agents/english).',
      examples: ['21m00Tcm4TlvDq8ikWAM'],
    }),
    response_format: Type.Optional(
      Type.String({
        maxLength: 20,
        description:
          'mp3 (44.1 kHz 128 kb/s, default), opus (Ogg Opus 48 kHz 64 kb/s), wav (24 kHz, sent whole with its sizes), pcm (raw 24 kHz 16-bit little-endian); aac and flac are refused (400 listing the served ones).',
        examples: ['mp3'],
      }),
    ),
    speed: Type.Optional(
      Type.Number({
        minimum: 0.25,
        maximum: 4,
        description: '0.25 to 4.0; 1 is normal (the engine bounds it further).',
      }),
    ),
    instructions: Type.Optional(
      Type.String({ maxLength: 4096, description: 'Accepted and not used (the voice agent’s settings decide).' }),
    ),
    stream_format: Type.Optional(
      Type.String({
        maxLength: 10,
        description: "'audio' (default): the audio streams as it is encoded; 'sse' is refused.",
      }),
    ),
  },
  { additionalProperties: false },
);
export type SpeechBody = Static<typeof SpeechBody>;

/** The multipart form of transcriptions, for the OpenAPI document (the handler reads the parts). */
export const TranscriptionForm = Type.Object({
  file: Type.String({ format: 'binary', contentMediaType: 'application/octet-stream', description: 'The audio.' }),
  model: Type.String({
    description: 'OpenAI’s model name (whisper-1, gpt-4o-transcribe…): accepted; the configured engine transcribes.',
  }),
  language: Type.Optional(
    Type.String({
      maxLength: 16,
      description: 'ISO 639-1 code (a hint; verbose_json echoes it when the engine names none).',
    }),
  ),
  prompt: Type.Optional(Type.String({ maxLength: 4096, description: 'Accepted and not used.' })),
  response_format: Type.Optional(
    Type.String({ description: 'json (default), text or verbose_json; srt and vtt are refused.' }),
  ),
  temperature: Type.Optional(Type.String({ description: '0 to 1: accepted and not used.' })),
});

export const Transcription = Type.Object(
  {
    text: Type.String(),
    task: Type.Optional(Type.String({ description: 'verbose_json: transcribe' })),
    language: Type.Optional(Type.String({ description: 'verbose_json' })),
    duration: Type.Optional(Type.Number({ description: 'verbose_json, seconds (WAV uploads)' })),
  },
  {
    description: 'json: `{text}`; verbose_json adds task, language and duration; text: the transcript as text/plain.',
    examples: [{ text: 'How long do refunds take?' }],
  },
);
