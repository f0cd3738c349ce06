/**
 * Text to speech (DESIGN §9): text in, encoded audio out, as a stream of bytes that starts before
 * the whole text is synthesised. Engines: the offline default (espeak-ng in WebAssembly with the
 * project's own encoders), ElevenLabs, and any server of OpenAI's speech protocol. The voice
 * agents family uses it for `…/tts` and for spoken answers; SpeechError (./speech.ts) is the one
 * failure type of both directions.
 */

/**
 * Output formats as ElevenLabs names them (`<codec>_<sample rate>[_<kbps>]`): MP3, raw PCM
 * (little-endian 16-bit mono), G.711 µ-law and A-law, WAV (16-bit mono PCM in a RIFF header).
 */
export const OUTPUT_FORMATS = [
  'mp3_22050_32',
  'mp3_44100_64',
  'mp3_44100_96',
  'mp3_44100_128',
  'mp3_44100_192',
  'pcm_8000',
  'pcm_16000',
  'pcm_22050',
  'pcm_24000',
  'pcm_44100',
  'ulaw_8000',
  'alaw_8000',
  'wav_8000',
  'wav_16000',
  'wav_22050',
  'wav_24000',
  'wav_44100',
] as const;

export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

export const DEFAULT_OUTPUT_FORMAT: OutputFormat = 'mp3_44100_128';

/** The content type each format is served with (`audio/L16;rate=N` is raw little-endian 16-bit mono). */
export function contentTypeOf(format: OutputFormat): string {
  const [codec, rate] = format.split('_') as [string, string];
  switch (codec) {
    case 'mp3':
      return 'audio/mpeg';
    case 'pcm':
      return `audio/L16;rate=${rate}`;
    case 'ulaw':
      return 'audio/basic';
    case 'alaw':
      return `audio/x-alaw-basic;rate=${rate}`;
    default:
      return 'audio/wav';
  }
}

/** How a voice is rendered: the provider's voice id plus, for the offline engine, an espeak-ng voice. */
export interface VoiceSpec {
  /** The provider's voice id (ElevenLabs premade ids in the catalog). */
  voiceId: string;
  /** espeak-ng voice and variant for the offline engine, e.g. `en-us+f3`, `ar+m1`. */
  offlineVoice?: string;
}

export interface SynthesisRequest {
  text: string;
  voice: VoiceSpec;
  format: OutputFormat;
  /** Provider model (ElevenLabs `eleven_turbo_v2_5`, OpenAI `tts-1`); engines ignore what they cannot use. */
  modelId?: string;
  /** ISO 639-1 code of the text's language, when known. */
  languageCode?: string;
  /** Speaking rate in percent of normal (100). */
  speed?: number;
  /** ElevenLabs voice settings, 0.0–1.0; ignored by engines without them (documented per engine). */
  stability?: number;
  similarityBoost?: number;
  style?: number;
}

export interface TextToSpeech {
  /** `<engine>` or `<engine>:<model>`, e.g. `espeak-ng`, `elevenlabs:eleven_turbo_v2_5`. */
  readonly id: string;
  /** The output formats this engine produces (a request for another is refused before synthesis). */
  readonly formats: readonly OutputFormat[];
  /**
   * Synthesises `request.text` and yields the encoded bytes as they are ready (long text is
   * split on sentences). Throws SpeechError (`unavailable` for credentials or a missing engine,
   * `provider` for a failing or silent provider, `audio` for text the engine refuses); stops
   * when `signal` aborts.
   */
  synthesize(request: SynthesisRequest, signal: AbortSignal): AsyncIterable<Buffer>;
}
