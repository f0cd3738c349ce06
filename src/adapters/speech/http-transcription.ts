/**
 * What the HTTP speech-to-text providers share: one multipart POST of the audio file, bounded by
 * a timeout and the caller's signal, and their refusals turned into SpeechError by status.
 */
import { startTimeLimit } from '../../lib/abort-limit.js';
import { SpeechError, type AudioFile, type SpeechFailure, type SpeechToText } from '../../ports/speech.js';

/** One HTTP speech-to-text provider: where the file goes, with what, and where the language is. */
export interface TranscriptionEndpoint {
  /** `<engine>:<model>`. */
  id: string;
  /** Names the provider in messages: "ElevenLabs", "The speech-to-text provider". */
  provider: string;
  endpoint: string;
  headers: Record<string, string>;
  /** Form fields besides the file. */
  fields: Record<string, string>;
  /** The answer's field naming the language heard, if any. */
  languageField: string;
  timeoutMs: number;
}

export function createHttpTranscriber(spec: TranscriptionEndpoint): SpeechToText {
  return {
    id: spec.id,
    async transcribe(audio, signal) {
      return transcriptOf(spec.provider, await postTranscription(spec, audio, signal), spec.languageField);
    },
  };
}

/** The provider's own words from an error body: OpenAI's `error.message`, ElevenLabs' `detail`. */
function providerMessage(body: string): string {
  try {
    const parsed = JSON.parse(body) as { error?: unknown; detail?: unknown; message?: unknown };
    for (const candidate of [parsed.error, parsed.detail, parsed]) {
      if (typeof candidate === 'string' && candidate) return candidate;
      if (Array.isArray(candidate)) {
        const messages = candidate
          .map((item: { msg?: unknown }) => item?.msg)
          .filter((msg): msg is string => typeof msg === 'string');
        if (messages.length) return messages.join('; ');
      }
      if (
        candidate &&
        typeof candidate === 'object' &&
        typeof (candidate as { message?: unknown }).message === 'string'
      ) {
        return (candidate as { message: string }).message;
      }
    }
  } catch {
    // not JSON: use the text
  }
  return body.slice(0, 200) || 'no message';
}

function failureOfStatus(status: number): SpeechFailure {
  if (status === 401 || status === 403) return 'unavailable';
  if (status === 400 || status === 413 || status === 415 || status === 422) return 'audio';
  return 'provider';
}

/** Posts the audio and returns the provider's JSON answer; throws SpeechError. */
async function postTranscription(
  request: TranscriptionEndpoint,
  audio: AudioFile,
  signal: AbortSignal,
): Promise<unknown> {
  const form = new FormData();
  for (const [name, value] of Object.entries(request.fields)) form.set(name, value);
  form.set('file', new Blob([audio.buffer], { type: audio.mimetype }), audio.filename);
  const limit = startTimeLimit(signal, request.timeoutMs);
  let response: Response;
  let text: string;
  try {
    response = await fetch(request.endpoint, {
      method: 'POST',
      headers: request.headers,
      body: form,
      signal: limit.signal,
    });
    text = await response.text();
  } catch (error) {
    if (signal.aborted) throw error;
    const reason = limit.timedOut
      ? `did not answer within ${request.timeoutMs} ms`
      : `is unreachable at ${request.endpoint}: ${(error as Error).message}`;
    throw new SpeechError(`${request.provider} ${reason}`, 'provider');
  } finally {
    limit.release();
  }
  if (!response.ok) {
    throw new SpeechError(
      `${request.provider} answered ${response.status}: ${providerMessage(text)}`,
      failureOfStatus(response.status),
      response.status,
    );
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new SpeechError(`${request.provider} returned a body that is not JSON`, 'provider', response.status);
  }
}

/** The `text` (and a language code, when present) of a provider's answer. */
function transcriptOf(
  provider: string,
  body: unknown,
  languageField: string,
): { text: string; language: string | null } {
  const record = (body && typeof body === 'object' ? body : {}) as Record<string, unknown>;
  if (typeof record.text !== 'string') throw new SpeechError(`${provider} returned no transcript text`, 'provider');
  const language = record[languageField];
  return { text: record.text.trim(), language: typeof language === 'string' && language ? language : null };
}
