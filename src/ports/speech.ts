/**
 * Speech to text: an audio file in, its transcript out. Chat uses it for the `audio` field of a
 * turn (the transcript becomes the user's message and a `transcribed_text` event).
 */

export interface AudioFile {
  buffer: Buffer;
  filename: string;
  mimetype: string;
}

export interface Transcript {
  text: string;
  /** ISO 639 code of the language heard, when the engine says. */
  language: string | null;
}

/**
 * Why a transcription failed: `audio` — the file itself was refused (unreadable, empty, not
 * audio); `format` — this engine cannot read the file's format; `unavailable` — the engine is
 * not usable as configured (missing model, refused credentials); `provider` — the provider
 * failed or did not answer in time.
 */
export type SpeechFailure = 'audio' | 'format' | 'unavailable' | 'provider';

export class SpeechError extends Error {
  override readonly name = 'SpeechError';
  constructor(
    message: string,
    readonly failure: SpeechFailure,
    /** The provider's HTTP status, when it answered with one. */
    readonly status?: number,
  ) {
    super(message);
  }
}

export interface SpeechToText {
  /** `<engine>:<model>`, e.g. `elevenlabs:scribe_v2`. */
  readonly id: string;
  /** Throws SpeechError; stops when `signal` aborts. */
  transcribe(audio: AudioFile, signal: AbortSignal): Promise<Transcript>;
}
