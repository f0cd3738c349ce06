/**
 * Text to speech (DESIGN §9): text in, encoded audio out, as a stream of bytes that starts before
 * the whole text is synthesised. Engines: the offline default (espeak-ng in WebAssembly with the
 * project's own encoders), ElevenLabs, and any server of OpenAI's speech protocol. The voice
 * agents family uses it for `…/tts` and for spoken answers; SpeechError (./speech.ts) is the one
 * failure type of both directions.
 */

/**
 * Output formats as ElevenLabs names them (`<codec>_<sample rate>[_<kbps>]`), all those its API and
 * SDK list: MP3 (MPEG-1 at 32/44.1/48 kHz, MPEG-2 at 22.05/24 kHz), raw PCM (16-bit little-endian
 * mono, as ElevenLabs sends it), G.711 µ-law and A-law, WAV (16-bit mono PCM in a RIFF header) and
 * Opus in Ogg (RFC 7845) at 48 kHz.
 */
export const OUTPUT_FORMATS = [
  'mp3_22050_32',
  'mp3_24000_48',
  'mp3_44100_32',
  'mp3_44100_64',
  'mp3_44100_96',
  'mp3_44100_128',
  'mp3_44100_192',
  'pcm_8000',
  'pcm_16000',
  'pcm_22050',
  'pcm_24000',
  'pcm_32000',
  'pcm_44100',
  'pcm_48000',
  'ulaw_8000',
  'alaw_8000',
  'wav_8000',
  'wav_16000',
  'wav_22050',
  'wav_24000',
  'wav_32000',
  'wav_44100',
  'wav_48000',
  'opus_48000_32',
  'opus_48000_64',
  'opus_48000_96',
  'opus_48000_128',
  'opus_48000_192',
] as const;

export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

export const DEFAULT_OUTPUT_FORMAT: OutputFormat = 'mp3_44100_128';

export function isOutputFormat(format: string): format is OutputFormat {
  return (OUTPUT_FORMATS as readonly string[]).includes(format);
}

/**
 * The content type each format is served with. Raw PCM is `audio/pcm;rate=N` (little-endian, as
 * ElevenLabs labels its `pcm_*`), not `audio/L16`, which is big-endian (RFC 2586, RFC 3551).
 */
export function contentTypeOf(format: OutputFormat): string {
  const [codec, rate] = format.split('_') as [string, string];
  switch (codec) {
    case 'mp3':
      return 'audio/mpeg';
    case 'pcm':
      return `audio/pcm;rate=${rate}`;
    case 'ulaw':
      return 'audio/basic';
    case 'alaw':
      return `audio/x-alaw-basic;rate=${rate}`;
    case 'opus':
      return 'audio/ogg;codecs=opus';
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
  /**
   * One complete file rather than a stream (spoken turns' chunks): a WAV with its real sizes, an
   * MP3 led by a LAME info frame giving its encoder delay and padding, so that chunks decoded one
   * after another play without gaps. Engines that cannot do better send the stream's bytes.
   */
  complete?: boolean;
  /**
   * With `complete`, for an engine that `splitsFirstPart`: the first sentence's first moment (under
   * a second) comes as a complete file of its own, ahead of other work, then the rest as another;
   * each yielded Buffer is then one complete file (a spoken turn's first audio leaves sooner).
   */
  firstPart?: boolean;
}

export interface TextToSpeech {
  /** `<engine>` or `<engine>:<model>`, e.g. `espeak-ng`, `elevenlabs:eleven_turbo_v2_5`. */
  readonly id: string;
  /** The output formats this engine produces (a request for another is refused before synthesis). */
  readonly formats: readonly OutputFormat[];
  /** Honours `firstPart` (else a `complete` request's answer is one file, however it is streamed). */
  readonly splitsFirstPart?: boolean;
  /**
   * Synthesises `request.text` and yields the encoded bytes as they are ready (long text is
   * split on sentences). Throws SpeechError (`unavailable` for credentials or a missing engine,
   * `provider` for a failing or silent provider, `audio` for text the engine refuses); stops
   * when `signal` aborts.
   */
  synthesize(request: SynthesisRequest, signal: AbortSignal): AsyncIterable<Buffer>;
}
