/**
 * ElevenLabs' request and response objects as far as `/elevenlabs` takes and gives them. Bodies
 * are closed; the documented fields this service does not use are named, accepted and ignored, so
 * the official SDKs (which send what their callers set) are served.
 */
import { Type, type Static } from '@sinclair/typebox';
import { Nullable } from '../../http/schemas.js';

const closed = { additionalProperties: false } as const;
const ignored = (description = 'accepted and ignored (ElevenLabs field this service does not use)') =>
  Type.Optional(Type.Unknown({ description }));
const Unit = (description: string) => Type.Optional(Nullable(Type.Number({ minimum: 0, maximum: 1, description })));

export const VoiceIdParams = Type.Object(
  { voice_id: Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9_.-]+$' }) },
  closed,
);

export const TtsQuery = Type.Object(
  {
    output_format: Type.Optional(
      Type.String({
        maxLength: 40,
        description: 'the audio format (default mp3_44100_128); the 400 lists the served ones',
      }),
    ),
    enable_logging: ignored(),
    optimize_streaming_latency: ignored(),
  },
  closed,
);
export type TtsQuery = Static<typeof TtsQuery>;

export const TtsBody = Type.Object(
  {
    text: Type.String({ minLength: 1, maxLength: 100_000, description: 'At most TTS_MAX_TEXT_CHARS characters.' }),
    model_id: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 100 }))),
    language_code: Type.Optional(Nullable(Type.String({ pattern: '^[a-z]{2}(-[A-Za-z]{2})?$' }))),
    voice_settings: Type.Optional(
      Nullable(
        Type.Object(
          {
            stability: Unit('0.0–1.0 (ElevenLabs engine)'),
            similarity_boost: Unit('0.0–1.0 (ElevenLabs engine)'),
            style: Unit('0.0–1.0 (ElevenLabs engine)'),
            use_speaker_boost: ignored(),
            speed: Type.Optional(
              Nullable(Type.Number({ minimum: 0.5, maximum: 2, description: '1.0 is normal speed' })),
            ),
          },
          closed,
        ),
      ),
    ),
    seed: ignored(),
    previous_text: ignored(),
    next_text: ignored(),
    previous_request_ids: ignored(),
    next_request_ids: ignored(),
    pronunciation_dictionary_locators: ignored(),
    apply_text_normalization: ignored(),
    apply_language_text_normalization: ignored(),
    use_pvc_as_ivc: ignored(),
    audio_effects: ignored(),
  },
  closed,
);
export type TtsBody = Static<typeof TtsBody>;

export const Voice = Type.Object({
  voice_id: Type.String(),
  name: Type.String(),
  category: Type.String({ examples: ['premade'] }),
  description: Type.String(),
  labels: Type.Record(Type.String(), Type.String()),
  preview_url: Type.Null(),
  available_for_tiers: Type.Array(Type.String()),
  high_quality_base_model_ids: Type.Array(Type.String()),
});
export type Voice = Static<typeof Voice>;

export const VoicesV1 = Type.Object({ voices: Type.Array(Voice) });

export const VoicesV2Query = Type.Object(
  {
    next_page_token: Type.Optional(Type.String({ maxLength: 20, pattern: '^[0-9]+$' })),
    page_size: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 10 })),
    search: Type.Optional(Type.String({ maxLength: 200 })),
    category: Type.Optional(Type.String({ maxLength: 50 })),
    sort: ignored(),
    sort_direction: ignored(),
    voice_type: ignored(),
    fine_tuning_state: ignored(),
    collection_id: ignored(),
    include_total_count: ignored(),
    voice_ids: ignored(),
  },
  closed,
);
export type VoicesV2Query = Static<typeof VoicesV2Query>;

export const VoicesV2 = Type.Object({
  voices: Type.Array(Voice),
  has_more: Type.Boolean(),
  total_count: Type.Integer(),
  next_page_token: Nullable(Type.String()),
});

export const ModelObject = Type.Object({
  model_id: Type.String(),
  name: Type.String(),
  description: Type.String(),
  can_do_text_to_speech: Type.Boolean(),
  can_do_voice_conversion: Type.Boolean(),
  languages: Type.Array(Type.Object({ language_id: Type.String(), name: Type.String() })),
});
export type ModelObject = Static<typeof ModelObject>;

export const Transcript = Type.Object({
  language_code: Type.String(),
  language_probability: Type.Number(),
  text: Type.String(),
  words: Type.Array(
    Type.Object({ text: Type.String(), type: Type.String({ examples: ['word', 'spacing'] }), logprob: Type.Number() }),
  ),
  audio_duration_secs: Type.Optional(Type.Number()),
});
export type Transcript = Static<typeof Transcript>;

/** The multipart form of speech to text, for the OpenAPI document (the handler reads the parts). */
export const SttForm = Type.Object({
  model_id: Type.String({ maxLength: 100, description: 'accepted (the configured engine transcribes)' }),
  file: Type.String({ format: 'binary', contentMediaType: 'application/octet-stream', description: 'The audio.' }),
  language_code: Type.Optional(Type.String({ maxLength: 16, description: 'a hint; engines detect the language' })),
});
