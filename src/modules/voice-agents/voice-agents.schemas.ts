import { Type, type Static, type TOptional, type TSchema } from '@sinclair/typebox';
import { OUTPUT_FORMATS } from '../../ports/text-to-speech.js';
import { Nullable, StringEnum, Timestamp, Uuid } from '../../http/schemas.js';

/**
 * Language codes a voice agent may name: the 32 languages of ElevenLabs' turbo v2.5 and
 * multilingual models (ISO 639-1, `fil` for Filipino). The catalog's languages (en, ar) are among them.
 */
export const LANGUAGES = [
  'en',
  'ar',
  'bg',
  'cs',
  'da',
  'de',
  'el',
  'es',
  'fi',
  'fil',
  'fr',
  'hi',
  'hr',
  'hu',
  'id',
  'it',
  'ja',
  'ko',
  'ms',
  'nl',
  'no',
  'pl',
  'pt',
  'ro',
  'ru',
  'sk',
  'sv',
  'ta',
  'tr',
  'uk',
  'vi',
  'zh',
] as const;

/** ElevenLabs' fast turbo model, the default `model_id`. */
export const DEFAULT_MODEL_ID = 'eleven_turbo_v2_5';
export const VOICE_SPEED = { minimum: 50, maximum: 200 } as const;
export const GENDERS = ['male', 'female', 'neutral'] as const;
/** `premade` are ElevenLabs' public voices, `curated` this service's own (`sb-…` ids); the rest are provider categories. */
export const CATEGORIES = ['premade', 'curated', 'professional', 'cloned', 'generated'] as const;

const unit = (description: string) => Type.Number({ minimum: 0, maximum: 1, description });
const closed = { additionalProperties: false } as const;

const fields = {
  name: Type.String({ minLength: 1, maxLength: 200 }),
  description: Type.String({ maxLength: 2000 }),
  voice_id: Type.String({
    minLength: 1,
    maxLength: 100,
    description:
      'a voice of GET /voice-agents/english, /arabic or /multilingual (or, with ElevenLabs configured, of the account)',
  }),
  voice_name: Type.String({ maxLength: 200, description: "defaults to the catalog voice's name" }),
  language: Type.String({ minLength: 2, maxLength: 3, description: `one of ${LANGUAGES.join(', ')}` }),
  model_id: Type.String({ minLength: 1, maxLength: 100, description: `default ${DEFAULT_MODEL_ID}` }),
  output_format: Type.String({ minLength: 1, maxLength: 30, description: `one of ${OUTPUT_FORMATS.join(', ')}` }),
  active: Type.Boolean(),
  temperature: unit('0.0 to 1.0, default 0.7'),
  voice_speed: Type.Number({ ...VOICE_SPEED, description: 'percent of normal speed, 50 to 200, default 100' }),
  voice_stability: unit('0.0 to 1.0, default 0.5'),
  voice_similarity_boost: unit('0.0 to 1.0, default 0.5'),
  voice_style: unit('0.0 to 1.0, default 0.0'),
  main_agent_id: Nullable(Uuid({ description: "an agent of the caller's company; null unlinks it" })),
};

const { name, voice_id, ...rest } = fields;
const optional = <T extends Record<string, TSchema>>(schemas: T) =>
  Object.fromEntries(Object.entries(schemas).map(([key, schema]) => [key, Type.Optional(schema)])) as {
    [K in keyof T]: TOptional<T[K]>;
  };

export const CreateVoiceAgentBody = Type.Object({ name, voice_id, ...optional(rest) }, closed);
export type CreateVoiceAgentBody = Static<typeof CreateVoiceAgentBody>;

export const UpdateVoiceAgentBody = Type.Partial(Type.Object(fields), closed);
export type UpdateVoiceAgentBody = Static<typeof UpdateVoiceAgentBody>;

export const VoiceAgent = Type.Object({
  id: Uuid(),
  name: Type.String(),
  description: Type.String(),
  voice_id: Type.String(),
  voice_name: Type.String(),
  language: Type.String(),
  model_id: Type.String(),
  active: Type.Boolean(),
  temperature: Type.Number(),
  voice_speed: Type.Number(),
  voice_stability: Type.Number(),
  voice_similarity_boost: Type.Number(),
  voice_style: Type.Number(),
  output_format: Type.String(),
  company_id: Uuid(),
  main_agent_id: Nullable(Uuid()),
  created_at: Timestamp(),
  updated_at: Timestamp(),
});
export type VoiceAgent = Static<typeof VoiceAgent>;

export const VoiceAgentParams = Type.Object({ id: Uuid() });

/** A union of literals: unlike StringEnum, TypeBox's Value checker (the catalog's start-up check) knows it. */
const OneOf = <const T extends readonly string[]>(values: T) => Type.Union(values.map((value) => Type.Literal(value)));

const curatedVoice = <G extends TSchema, C extends TSchema, L extends TSchema>(gender: G, category: C, language: L) =>
  Type.Object(
    {
      voice_id: Type.String({ minLength: 1, maxLength: 100 }),
      name: Type.String({ minLength: 1, maxLength: 100 }),
      gender,
      accent: Type.String({ minLength: 1, maxLength: 50 }),
      category,
      languages: Type.Array(language, { minItems: 1, uniqueItems: true }),
      featured: Type.Boolean(),
      description: Type.String({ maxLength: 300 }),
      offline_voice: Type.String({
        description: 'the espeak-ng voice and variant of the offline engine, e.g. en-us+f1',
      }),
    },
    closed,
  );

/** A curated voice as the lists return it. */
export const CuratedVoice = curatedVoice(StringEnum(GENDERS), StringEnum(CATEGORIES), StringEnum(LANGUAGES));
export type CuratedVoice = Static<typeof CuratedVoice>;

export const CatalogFile = Type.Object(
  {
    version: Type.Literal(1),
    voices: Type.Array(curatedVoice(OneOf(GENDERS), OneOf(CATEGORIES), OneOf(LANGUAGES)), { minItems: 1 }),
  },
  closed,
);

export const VoiceList = Type.Object({ voices: Type.Array(CuratedVoice) });

export const EnglishVoicesQuery = Type.Object({
  gender: Type.Optional(StringEnum(GENDERS)),
  category: Type.Optional(StringEnum(CATEGORIES)),
  accent: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 50,
      description: 'e.g. American, British, Australian, Irish, Indian, Scottish',
    }),
  ),
  featured_only: Type.Boolean({ default: false }),
  max_voices: Type.Integer({ minimum: 1, maximum: 100, default: 100, description: 'default 100, max 100' }),
});
export type EnglishVoicesQuery = Static<typeof EnglishVoicesQuery>;

export const ArabicVoicesQuery = Type.Object({ gender: Type.Optional(StringEnum(['male', 'female'] as const)) });
