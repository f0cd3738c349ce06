/**
 * ElevenLabs' speech protocol over the voice agents family's speech service: the official SDKs'
 * requests (`voice_settings` nested, `output_format` in the query, voices v1 and v2, speech to
 * text) become the service's `speak` and `transcribe`; the curated catalog is the voice list.
 */
import { AppErrors } from '../../http/errors.js';
import type { AudioFile } from '../../ports/speech.js';
import { catalogVoices, findCatalogVoice, type SpeechScope, type VoiceSpeechService } from '../voice-agents/index.js';
import type { ModelObject, Transcript, TtsBody, TtsQuery, Voice, VoicesV2Query } from './elevenlabs-api.schemas.js';

type CatalogVoice = ReturnType<typeof catalogVoices>[number];

const LANGUAGE_NAMES: Record<string, string> = { en: 'English', ar: 'Arabic' };

/** A catalog voice as ElevenLabs describes a voice. */
export function voiceOf(voice: CatalogVoice): Voice {
  return {
    voice_id: voice.voice_id,
    name: voice.name,
    category: voice.category,
    description: voice.description,
    labels: { gender: voice.gender, accent: voice.accent, language: voice.languages.join(',') },
    preview_url: null,
    available_for_tiers: [],
    high_quality_base_model_ids: [],
  };
}

/** Words and the spaces between them, as ElevenLabs lists a transcript's tokens (no timings here). */
export function wordsOf(text: string): Transcript['words'] {
  return (text.match(/\s+|[^\s]+/g) ?? []).map((token) => ({
    text: token,
    type: /^\s+$/.test(token) ? 'spacing' : 'word',
    logprob: 0,
  }));
}

export function createElevenLabsApi(speech: VoiceSpeechService) {
  return {
    maxAudioBytes: speech.maxAudioBytes,

    /** Speech of `body.text` in `voiceId`, in the query's `output_format`. */
    speak(voiceId: string, query: TtsQuery, body: TtsBody, signal: AbortSignal, scope?: SpeechScope) {
      const settings = body.voice_settings ?? {};
      return speech.speak(
        voiceId,
        {
          text: body.text,
          ...(body.model_id ? { model_id: body.model_id } : {}),
          ...(body.language_code ? { language_code: body.language_code } : {}),
          ...(query.output_format ? { output_format: query.output_format } : {}),
          ...(typeof settings.speed === 'number' ? { voice_speed: Math.round(settings.speed * 100) } : {}),
          ...(typeof settings.stability === 'number' ? { voice_stability: settings.stability } : {}),
          ...(typeof settings.similarity_boost === 'number'
            ? { voice_similarity_boost: settings.similarity_boost }
            : {}),
          ...(typeof settings.style === 'number' ? { voice_style: settings.style } : {}),
        },
        signal,
        scope,
      );
    },

    voices(): Voice[] {
      return catalogVoices().map(voiceOf);
    },

    /** A page of voices: `search` in the name, description and labels; `category`; a numeric page token. */
    voicesPage(query: VoicesV2Query) {
      const search = query.search?.toLowerCase();
      const matching = catalogVoices()
        .map(voiceOf)
        .filter((voice) => !query.category || voice.category === query.category)
        .filter(
          (voice) =>
            !search ||
            [voice.name, voice.description, ...Object.values(voice.labels)].some((text) =>
              text.toLowerCase().includes(search),
            ),
        );
      const start = Number(query.next_page_token ?? 0);
      const size = query.page_size ?? 10;
      const voices = matching.slice(start, start + size);
      const more = start + size < matching.length;
      return {
        voices,
        has_more: more,
        total_count: matching.length,
        next_page_token: more ? String(start + size) : null,
      };
    },

    voice(voiceId: string): Voice {
      const found = findCatalogVoice(voiceId);
      if (!found) throw AppErrors.notFound('Voice', voiceId);
      return voiceOf(found);
    },

    /** The engines in force as ElevenLabs models: the text-to-speech engine speaks the catalog's languages. */
    models(): ModelObject[] {
      const engine = speech.engines.tts;
      if (!engine) return [];
      const languages = [...new Set(catalogVoices().flatMap((voice) => voice.languages))];
      return [
        {
          model_id: engine,
          name: engine === 'espeak-ng' ? 'espeak-ng (offline)' : engine,
          description: 'The text-to-speech engine this instance is configured with; any model_id is passed to it.',
          can_do_text_to_speech: true,
          can_do_voice_conversion: false,
          languages: languages.map((code) => ({ language_id: code, name: LANGUAGE_NAMES[code] ?? code })),
        },
      ];
    },

    async transcribe(file: AudioFile | undefined, signal: AbortSignal): Promise<Transcript> {
      const result = await speech.transcribe(file, signal);
      return {
        language_code: result.language ?? 'und',
        language_probability: result.language ? 1 : 0,
        text: result.text,
        words: wordsOf(result.text),
        ...(result.duration_s !== undefined ? { audio_duration_secs: result.duration_s } : {}),
      };
    },
  };
}

export type ElevenLabsApi = ReturnType<typeof createElevenLabsApi>;
