/**
 * OpenAI's audio protocol (`/v1/audio/speech`, `/v1/audio/transcriptions`) in front of the voice
 * agents family's speech service, so OpenAI's SDKs speak and transcribe unmodified. `voice` is a
 * voice agent of the caller's company (its voice and settings) or a voice of the catalog (or,
 * with the ElevenLabs engine, of the provider's list); formats map to ours: mp3 → mp3_44100_128,
 * opus → opus_48000_64 (Ogg), wav → wav_24000, pcm → pcm_24000 (OpenAI's raw 24 kHz 16-bit
 * little-endian). aac and flac are refused with the list. `model` and `instructions` are accepted
 * and not used (the engine and the voice decide); `speed` (0.25–4) is the rate.
 */
import type { Db } from '../../db/database.js';
import type { ChatCaller } from '../../http/caller.js';
import { AppError, AppErrors, truncateQuoted } from '../../http/errors.js';
import type { AudioFile } from '../../ports/speech.js';
import type { OutputFormat } from '../../ports/text-to-speech.js';
import { findVoiceAgent, type VoiceSpeechService } from '../voice-agents/index.js';
import type { SpeechBody } from './openai-api.audio.schemas.js';

/** OpenAI's `response_format` values of speech and the formats they are spoken in. */
export const SPEECH_FORMATS: Record<string, OutputFormat> = {
  mp3: 'mp3_44100_128',
  opus: 'opus_48000_64',
  wav: 'wav_24000',
  pcm: 'pcm_24000',
};
export const TRANSCRIPT_FORMATS = ['json', 'text', 'verbose_json'] as const;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface TranscriptionFields {
  model: string;
  language?: string;
  prompt?: string;
  response_format?: string;
  temperature?: string;
}

export type OpenAiAudio = ReturnType<typeof createOpenAiAudio>;

export function createOpenAiAudio(deps: { db: Db; speech: VoiceSpeechService }) {
  /** The response format as ours, refused with OpenAI's names of the ones the engine serves. */
  function formatOf(name: string): OutputFormat {
    const served = Object.keys(SPEECH_FORMATS).filter((key) => {
      try {
        deps.speech.checkFormat(SPEECH_FORMATS[key]!);
        return true;
      } catch {
        return false;
      }
    });
    const format = SPEECH_FORMATS[name];
    if (!format || !served.includes(name)) {
      if (served.length === 0) deps.speech.checkFormat(SPEECH_FORMATS.mp3!); // the 503 without an engine
      throw AppErrors.validation(
        `Invalid field 'response_format': ${truncateQuoted(name)} is not served; supported: ${served.join(', ')}`,
      );
    }
    return format;
  }

  return {
    /** The spoken `input`; throws OpenAI-shaped errors (400 naming the field). */
    async speech(caller: ChatCaller, body: SpeechBody, signal: AbortSignal) {
      if (body.stream_format === 'sse')
        throw AppErrors.validation(
          "Invalid field 'stream_format': only 'audio' is served (the audio streams as it is encoded)",
        );
      const format = formatOf(body.response_format ?? 'mp3');
      if (!body.input.trim()) throw AppErrors.validation("Invalid field 'input': must not be blank");
      if (body.input.length > deps.speech.maxTextChars) {
        throw AppErrors.validation(
          `Invalid field 'input': at most ${deps.speech.maxTextChars} characters (got ${body.input.length})`,
        );
      }
      const agent = UUID.test(body.voice) ? await findVoiceAgent(deps.db, caller.companyId, body.voice) : undefined;
      const speed = body.speed !== undefined ? Math.round(body.speed * 100) : undefined;
      const input = agent
        ? {
            text: body.input,
            model_id: agent.model_id,
            language_code: agent.language,
            output_format: format,
            voice_speed: speed ?? agent.voice_speed,
            voice_stability: agent.voice_stability,
            voice_similarity_boost: agent.voice_similarity_boost,
            voice_style: agent.voice_style,
          }
        : { text: body.input, output_format: format, ...(speed !== undefined ? { voice_speed: speed } : {}) };
      try {
        return await deps.speech.speak(agent ? agent.voice_id : body.voice, input, signal, {
          companyId: caller.companyId,
        });
      } catch (error) {
        if (error instanceof AppError && error.statusCode === 404)
          throw AppErrors.validation(
            `Invalid field 'voice': ${truncateQuoted(body.voice)} is neither a voice agent of your company nor a voice of the catalog (GET /api/public/voice-agents/english lists them)`,
          );
        throw error;
      }
    },

    /** The transcript in OpenAI's `response_format`: json `{text}`, text, or verbose_json. */
    async transcribe(file: AudioFile | undefined, fields: TranscriptionFields, signal: AbortSignal) {
      const format = fields.response_format ?? 'json';
      if (!(TRANSCRIPT_FORMATS as readonly string[]).includes(format)) {
        throw AppErrors.validation(
          `Invalid field 'response_format': ${truncateQuoted(format)} is not served; supported: ${TRANSCRIPT_FORMATS.join(', ')}`,
        );
      }
      if (fields.temperature !== undefined) {
        const temperature = Number(fields.temperature);
        if (!(temperature >= 0 && temperature <= 1))
          throw AppErrors.validation("Invalid field 'temperature': a number from 0 to 1");
      }
      const transcript = await deps.speech.transcribe(file, signal);
      if (format === 'text') return { kind: 'text' as const, text: transcript.text };
      if (format === 'json') return { kind: 'json' as const, body: { text: transcript.text } };
      return {
        kind: 'json' as const,
        body: {
          task: 'transcribe',
          language: transcript.language ?? fields.language ?? 'unknown',
          ...(transcript.duration_s !== undefined ? { duration: transcript.duration_s } : {}),
          text: transcript.text,
        },
      };
    },
  };
}
