/**
 * The curated voice catalog (voices.catalog.json, data not code): loaded once, checked at start
 * (a broken catalog stops start-up with the entry and the problem), filtered for the curated
 * lists, and looked up by the TTS routes for the espeak-ng voice that renders an entry offline.
 */
import { Value } from '@sinclair/typebox/value';
import raw from './voices.catalog.json' with { type: 'json' };
import { CatalogFile, type CuratedVoice } from './voice-agents.schemas.js';

/** espeak-ng voices the offline engine has for the catalog's languages (lang/gmw/en*, lang/sem/ar). */
export const OFFLINE_LANGUAGE_VOICES = [
  'en-us',
  'en-us-nyc',
  'en-gb',
  'en-gb-x-rp',
  'en-gb-scotland',
  'en-gb-x-gbclan',
  'en-gb-x-gbcwmd',
  'en-029',
  'ar',
] as const;

/** `<voice>+<variant>`: espeak-ng's male variants m1–m7 and female variants f1–f5. */
export const OFFLINE_VOICE = new RegExp(`^(${OFFLINE_LANGUAGE_VOICES.join('|')})\\+(m[1-7]|f[1-5])$`);

export class CatalogError extends Error {
  override name = 'CatalogError';
}

/** Checks a parsed catalog and returns its voices; throws CatalogError naming the entry and the problem. */
export function validateCatalog(data: unknown): readonly CuratedVoice[] {
  const first = Value.Errors(CatalogFile, data).First();
  if (first) throw new CatalogError(`voices.catalog.json: ${first.path || '/'} ${first.message}`);
  const { voices } = data as { voices: CuratedVoice[] };
  const seen = new Set<string>();
  for (const voice of voices) {
    const where = `voices.catalog.json: voice ${voice.voice_id}`;
    if (seen.has(voice.voice_id)) throw new CatalogError(`${where} is listed twice`);
    seen.add(voice.voice_id);
    const match = OFFLINE_VOICE.exec(voice.offline_voice);
    if (!match)
      throw new CatalogError(`${where}: offline_voice ${voice.offline_voice} is not <espeak-ng voice>+<m1–m7|f1–f5>`);
    const [, language, variant] = match as unknown as [string, string, string];
    if (!voice.languages.some((code) => language.startsWith(code)))
      throw new CatalogError(
        `${where}: offline_voice ${voice.offline_voice} speaks none of ${voice.languages.join(', ')}`,
      );
    if (voice.gender !== 'neutral' && variant[0] !== voice.gender[0])
      throw new CatalogError(`${where}: offline variant ${variant} does not match gender ${voice.gender}`);
  }
  return Object.freeze(voices.map((voice) => Object.freeze({ ...voice, languages: [...voice.languages] })));
}

let loaded: readonly CuratedVoice[] | undefined;
let byId: ReadonlyMap<string, CuratedVoice> | undefined;

/** The shipped catalog, validated on first use (the module's factory calls it at start). */
export function catalogVoices(): readonly CuratedVoice[] {
  if (!loaded) {
    loaded = validateCatalog(raw);
    byId = new Map(loaded.map((voice) => [voice.voice_id, voice]));
  }
  return loaded;
}

/** The catalog entry of a voice id (with its `offline_voice`), or undefined. */
export function findCatalogVoice(voiceId: string): CuratedVoice | undefined {
  catalogVoices();
  return byId?.get(voiceId);
}

/**
 * The espeak-ng voice that renders `voice` in `language`: its own offline voice when that speaks
 * the language; otherwise (a bilingual voice given text in its other language) that language's
 * default espeak-ng voice with the same variant: `ar+f2` speaks English as `en-us+f2`.
 */
export function offlineVoiceFor(voice: CuratedVoice, language?: string): string {
  const [base, variant] = voice.offline_voice.split('+') as [string, string];
  if (!language || base.startsWith(language)) return voice.offline_voice;
  if (language === 'ar') return `ar+${variant}`;
  if (language === 'en') return `en-us+${variant}`;
  return voice.offline_voice;
}

export interface EnglishFilters {
  gender?: string;
  category?: string;
  accent?: string;
  featured_only?: boolean;
  max_voices: number;
}

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/** English voices: gender, category, accent compared case-insensitively; featured first, then by name. */
export function englishVoices(filters: EnglishFilters): CuratedVoice[] {
  return ordered(
    catalogVoices().filter(
      (voice) =>
        voice.languages.includes('en') &&
        (!filters.gender || same(voice.gender, filters.gender)) &&
        (!filters.category || same(voice.category, filters.category)) &&
        (!filters.accent || same(voice.accent, filters.accent)) &&
        (!filters.featured_only || voice.featured),
    ),
  ).slice(0, filters.max_voices);
}

/** Voices that speak Arabic (the bilingual ones included), optionally of one gender. */
export function arabicVoices(gender?: string): CuratedVoice[] {
  return ordered(catalogVoices().filter((v) => v.languages.includes('ar') && (!gender || v.gender === gender)));
}

/** Voices that speak both English and Arabic. */
export function multilingualVoices(): CuratedVoice[] {
  return ordered(catalogVoices().filter((v) => v.languages.includes('en') && v.languages.includes('ar')));
}

function ordered(voices: CuratedVoice[]): CuratedVoice[] {
  return [...voices].sort((a, b) => Number(b.featured) - Number(a.featured) || a.name.localeCompare(b.name));
}
