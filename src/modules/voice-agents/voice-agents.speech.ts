/**
 * Speech for the voice agents family (DESIGN §9): text to speech in a curated (or the provider's)
 * voice, streamed while it is encoded, and speech to text through the chat family's speech port.
 * The engines come from the container; with none, a 503 says what to configure.
 */
import { AppError, AppErrors } from '../../http/errors.js';
import { notAudioReason } from '../../lib/audio-sniff.js';
import { CpuBusyError } from '../../lib/cpu-pool.js';
import { SpeechError, type AudioFile, type SpeechToText } from '../../ports/speech.js';
import {
  contentTypeOf,
  DEFAULT_OUTPUT_FORMAT,
  isOutputFormat,
  OUTPUT_FORMATS,
  type OutputFormat,
  type TextToSpeech,
} from '../../ports/text-to-speech.js';
import { withWavSizes } from '../../lib/wav-sizes.js';
import type { ProviderVoices } from './voice-agents.ports.js';
import {
  createSpeechCache,
  speechCacheKey,
  type SpeechCache,
  type SpeechCacheOptions,
} from './voice-agents.speech-cache.js';
import { findCatalogVoice, offlineVoiceFor } from './voice-catalog.js';

export interface VoiceSpeechDeps {
  tts: { tts: TextToSpeech | null; reason: string | null; maxTextChars: number; cache?: SpeechCacheOptions };
  stt: { stt: SpeechToText | null; reason: string | null };
  maxAudioBytes: number;
  /** The provider's voice list (ElevenLabs), checked for a voice outside the catalog. */
  providerVoices?: ProviderVoices | null;
}

export interface SpeakInput {
  text: string;
  model_id?: string;
  language_code?: string;
  output_format?: string;
  voice_speed?: number;
  voice_stability?: number;
  voice_similarity_boost?: number;
  voice_style?: number;
}

export interface SpeakOptions {
  /**
   * One complete file (a spoken turn's chunk): a WAV with its sizes, an MP3 led by its LAME info
   * frame (delay and padding) so that chunks play back to back without gaps. WAV is always
   * complete: its header carries the real sizes.
   */
  complete?: boolean;
  /**
   * With `complete`: the first moment of the first sentence as a complete file of its own, ahead
   * of other synthesis, then the rest as another (engines that `splitsFirstPart`; others give one
   * file). A spoken turn asks it for its first sentence, so its first audio leaves sooner.
   */
  firstPart?: boolean;
}

export interface SpokenAudio {
  contentType: string;
  /** The audio, the first chunk already synthesised (so a refusal is an error status, not a cut stream). */
  body: AsyncIterable<Buffer>;
  /**
   * The whole file, when it was made complete (WAV, or `complete` asked) as one, or was at hand
   * whole (a cached synthesis: sent in one write with its length); `body` yields it too.
   */
  bytes?: Buffer;
  /** `body` yields complete files, one per chunk (`firstPart` honoured). */
  files?: boolean;
}

export interface Transcription {
  text: string;
  language?: string;
  duration_s?: number;
}

/** Whose synthesis it is: a cached synthesis is only ever served to the company that asked for it. */
export interface SpeechScope {
  companyId: string;
}

/** Engines whose bytes are a pure function of the request (so their syntheses may be cached). */
const PURE_ENGINES = new Set(['espeak-ng']);

export type VoiceSpeechService = ReturnType<typeof createVoiceSpeechService>;

/** A SpeechError of text to speech as the family's error. */
function ttsError(error: unknown, voiceId: string): unknown {
  if (error instanceof CpuBusyError) return AppErrors.unavailable(error.message, error.retryAfterSeconds);
  if (!(error instanceof SpeechError)) return error;
  if (error.status === 404) return AppErrors.notFound('Voice', voiceId);
  if (error.status === 429) return AppErrors.tooManyRequests(`Text-to-speech provider is busy: ${error.message}`);
  switch (error.failure) {
    case 'unavailable':
      return AppErrors.unavailable(`Text-to-speech failed: ${error.message}`);
    case 'audio':
    case 'format':
      return AppErrors.validation(`Invalid field 'text': ${error.message}`);
    case 'provider':
      return new AppError(502, `Text-to-speech failed: ${error.message}`, 'BadGateway');
  }
}

/** Pulls the first chunk now; the rest streams. */
async function started(source: AsyncIterable<Buffer>, voiceId: string): Promise<AsyncIterable<Buffer>> {
  const iterator = source[Symbol.asyncIterator]();
  let first: IteratorResult<Buffer>;
  try {
    first = await iterator.next();
  } catch (error) {
    throw ttsError(error, voiceId);
  }
  return {
    async *[Symbol.asyncIterator]() {
      try {
        if (!first.done) yield first.value;
        for (let next = await iterator.next(); !next.done; next = await iterator.next()) yield next.value;
      } finally {
        await iterator.return?.();
      }
    },
  };
}

/** All of a started synthesis; a WAV with placeholder sizes (a provider's stream) gets its real ones. */
async function whole(body: AsyncIterable<Buffer>, format: OutputFormat, voiceId: string): Promise<Buffer> {
  const parts: Buffer[] = [];
  try {
    for await (const part of body) parts.push(part);
  } catch (error) {
    throw ttsError(error, voiceId);
  }
  const bytes = Buffer.concat(parts);
  return format.startsWith('wav_') ? withWavSizes(bytes) : bytes;
}

async function* replay(parts: readonly Buffer[]): AsyncIterable<Buffer> {
  yield* parts;
}

/** The synthesis as it streams, kept in the cache (its chunks) once it ended whole (not cut, not too large). */
function caching(
  source: AsyncIterable<Buffer>,
  keep: (parts: Buffer[]) => void,
  maxBytes: number,
  signal: AbortSignal,
) {
  return {
    async *[Symbol.asyncIterator]() {
      const parts: Buffer[] = [];
      let size = 0;
      for await (const part of source) {
        if (size <= maxBytes) parts.push(part);
        size += part.length;
        yield part;
      }
      if (size <= maxBytes && !signal.aborted) keep(parts);
    },
  };
}

/** Seconds of a PCM WAV file from its header, when it is one. */
function wavSeconds(buffer: Buffer): number | undefined {
  if (buffer.length < 44 || buffer.toString('latin1', 0, 4) !== 'RIFF' || buffer.toString('latin1', 8, 12) !== 'WAVE') {
    return undefined;
  }
  const byteRate = buffer.readUInt32LE(28);
  const dataAt = buffer.indexOf('data', 12, 'latin1');
  if (!byteRate || dataAt < 0 || dataAt + 8 > buffer.length) return undefined;
  const size = Math.min(buffer.readUInt32LE(dataAt + 4), buffer.length - dataAt - 8);
  return Math.round((size / byteRate) * 1000) / 1000;
}

export function createVoiceSpeechService(deps: VoiceSpeechDeps) {
  const { maxTextChars } = deps.tts;
  const cache: SpeechCache | null = deps.tts.cache ? createSpeechCache(deps.tts.cache) : null;

  /**
   * Whether a voice outside the catalog may be asked of the engine: never offline; with a voice
   * list, when the provider has it; with a provider but no list (or a list that cannot be read),
   * yes, and the provider's own 404 answers.
   */
  async function providerKnows(voiceId: string, signal: AbortSignal): Promise<boolean> {
    if (deps.tts.tts?.id === 'espeak-ng') return false;
    if (!deps.providerVoices) return true;
    return deps.providerVoices.hasVoice(voiceId, signal).catch(() => true);
  }
  /**
   * The upload, refused when missing (400), over the cap (413) or not audio by its content (415):
   * checked before the engine is, so a bad upload is the client's 4xx even where no engine is.
   */
  function checkAudio(file: AudioFile | undefined, field = 'file'): AudioFile {
    if (!file || file.buffer.length === 0)
      throw AppErrors.validation(`Invalid field '${field}': an audio file is required`);
    if (file.buffer.length > deps.maxAudioBytes) {
      throw AppErrors.payloadTooLarge(`Invalid field '${field}': larger than ${deps.maxAudioBytes} bytes`);
    }
    const notAudio = notAudioReason(field, file);
    if (notAudio) throw AppErrors.unsupportedMediaType(notAudio);
    return file;
  }

  return {
    maxTextChars,
    maxAudioBytes: deps.maxAudioBytes,
    /** The engines in force (ids such as `espeak-ng`, `elevenlabs`), null where none is configured. */
    engines: { tts: deps.tts.tts?.id ?? null, stt: deps.stt.stt?.id ?? null },

    /** `format` as an output format the engine serves, else the 400 (or the 503 without an engine). */
    checkFormat(format: string): OutputFormat {
      if (!isOutputFormat(format)) throw VoiceSpeechErrors.format(format, OUTPUT_FORMATS);
      const engine = deps.tts.tts;
      if (!engine) throw AppErrors.unavailable(deps.tts.reason ?? 'Text-to-speech is not configured');
      if (!engine.formats.includes(format)) throw VoiceSpeechErrors.format(format, engine.formats, engine.id);
      return format;
    },

    /** The synthesis cache's size (null when off). */
    cacheStats: () => cache?.stats() ?? null,

    /**
     * Speaks `input.text` in `voiceId`; throws the family's errors. With a `scope`, a pure engine's
     * synthesis is served from (and kept in) that company's partition of the cache.
     */
    async speak(
      voiceId: string,
      input: SpeakInput,
      signal: AbortSignal,
      scope?: SpeechScope,
      options: SpeakOptions = {},
    ): Promise<SpokenAudio> {
      const format = input.output_format ?? DEFAULT_OUTPUT_FORMAT;
      if (!isOutputFormat(format)) throw VoiceSpeechErrors.format(format, OUTPUT_FORMATS);
      if (!input.text.trim()) throw AppErrors.validation("Invalid field 'text': must not be blank");
      if (input.text.length > maxTextChars) {
        throw AppErrors.validation(
          `Invalid field 'text': at most ${maxTextChars} characters (got ${input.text.length})`,
        );
      }
      const engine = deps.tts.tts;
      if (!engine) throw AppErrors.unavailable(deps.tts.reason ?? 'Text-to-speech is not configured');
      if (!engine.formats.includes(format)) throw VoiceSpeechErrors.format(format, engine.formats, engine.id);
      const curated = findCatalogVoice(voiceId);
      if (!curated && !(await providerKnows(voiceId, signal))) throw AppErrors.notFound('Voice', voiceId);
      const language = input.language_code?.slice(0, 2).toLowerCase();
      const complete = options.complete === true || format.startsWith('wav_');
      const files = complete && options.firstPart === true && engine.splitsFirstPart === true;
      const request = {
        text: input.text,
        voice: { voiceId, ...(curated ? { offlineVoice: offlineVoiceFor(curated, language) } : {}) },
        format,
        modelId: input.model_id,
        languageCode: input.language_code,
        speed: input.voice_speed,
        stability: input.voice_stability,
        similarityBoost: input.voice_similarity_boost,
        style: input.voice_style,
        ...(complete ? { complete: true } : {}),
        ...(files ? { firstPart: true } : {}),
      };
      const contentType = contentTypeOf(format);
      const answer = async (body: AsyncIterable<Buffer>): Promise<SpokenAudio> => {
        if (!complete) return { contentType, body };
        // Each chunk a complete file of the engine's own encoders (WAV sizes included).
        if (files) return { contentType, body, files };
        const bytes = await whole(body, format, voiceId);
        return { contentType, body: replay([bytes]), bytes };
      };
      if (!cache || !scope || !PURE_ENGINES.has(engine.id))
        return answer(await started(engine.synthesize(request, signal), voiceId));
      const key = speechCacheKey({
        ...request,
        format: files ? `${format}:complete:parts` : complete ? `${format}:complete` : format,
        engine: engine.id,
        voiceId,
        offlineVoice: request.voice.offlineVoice,
      });
      const hit = cache.get(scope.companyId, key);
      if (hit && !complete)
        return { contentType, body: replay(hit), bytes: hit.length === 1 ? hit[0] : Buffer.concat(hit) };
      if (hit) return answer(replay(hit));
      // A stream is kept as one buffer (its parts were only the pace of the synthesis); complete
      // files keep their parts (each a file of its own when `files`).
      const keep = (parts: Buffer[]) => cache.set(scope.companyId, key, complete ? parts : [Buffer.concat(parts)]);
      const source = caching(engine.synthesize(request, signal), keep, cache.maxEntryBytes, signal);
      return answer(await started(source, voiceId));
    },

    checkAudio,

    /** The transcript of an uploaded audio file; throws the family's errors. */
    async transcribe(upload: AudioFile | undefined, signal: AbortSignal, field = 'file'): Promise<Transcription> {
      const file = checkAudio(upload, field);
      const engine = deps.stt.stt;
      if (!engine) throw AppErrors.unavailable(deps.stt.reason ?? 'Speech-to-text is not configured');
      try {
        const transcript = await engine.transcribe(file, signal);
        const duration = wavSeconds(file.buffer);
        return {
          text: transcript.text,
          ...(transcript.language ? { language: transcript.language } : {}),
          ...(duration !== undefined ? { duration_s: duration } : {}),
        };
      } catch (error) {
        if (!(error instanceof SpeechError)) throw error;
        if (error.failure === 'format')
          throw AppErrors.unsupportedMediaType(`Invalid field '${field}': ${error.message}`);
        if (error.failure === 'audio') throw AppErrors.validation(`Invalid field '${field}': ${error.message}`);
        if (error.failure === 'unavailable') throw AppErrors.unavailable(`Speech-to-text failed: ${error.message}`);
        throw new AppError(502, `Speech-to-text failed: ${error.message}`, 'BadGateway');
      }
    },
  };
}

export const VoiceSpeechErrors = {
  format: (format: string, supported: readonly string[], engine?: string) =>
    AppErrors.validation(
      `Invalid field 'output_format': ${JSON.stringify(format)} is not ${engine ? `served by ${engine}` : 'a known format'}; supported: ${supported.join(', ')}`,
    ),
};
