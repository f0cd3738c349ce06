/**
 * What the HTTP text-to-speech providers share: one JSON POST whose answer is streamed through as
 * it arrives, bounded by a timeout between two reads (not over the whole stream) and the caller's
 * signal; refusals become SpeechError by status with the provider's own message (ElevenLabs'
 * `detail.message`, OpenAI's `error.message`), never the credential.
 */
import { SpeechError, type SpeechFailure } from '../../ports/speech.js';

export interface SpeechPost {
  /** Names the provider in messages. */
  provider: string;
  endpoint: string;
  headers: Record<string, string>;
  body: unknown;
  timeoutMs: number;
}

function providerMessage(text: string): string {
  try {
    const parsed = JSON.parse(text) as { error?: unknown; detail?: unknown };
    for (const candidate of [parsed.detail, parsed.error]) {
      if (typeof candidate === 'string' && candidate) return candidate;
      if (Array.isArray(candidate)) {
        const messages = candidate.map((item: { msg?: unknown }) => item?.msg).filter((m) => typeof m === 'string');
        if (messages.length) return messages.join('; ');
      }
      const message = (candidate as { message?: unknown } | undefined)?.message;
      if (typeof message === 'string' && message) return message;
    }
  } catch {
    // not JSON: use the text
  }
  return text.slice(0, 200) || 'no message';
}

function failureOfStatus(status: number): SpeechFailure {
  if (status === 401 || status === 403) return 'unavailable';
  if (status === 400 || status === 422) return 'audio';
  return 'provider';
}

/** Posts the request and yields the audio body as it streams in; throws SpeechError. */
export async function* streamSpeech(request: SpeechPost, signal: AbortSignal): AsyncIterable<Buffer> {
  const idle = new AbortController();
  let timer = setTimeout(() => idle.abort(), request.timeoutMs);
  const rearm = () => {
    clearTimeout(timer);
    timer = setTimeout(() => idle.abort(), request.timeoutMs);
  };
  const failed = (error: unknown): never => {
    if (signal.aborted) throw error;
    const reason = idle.signal.aborted
      ? `did not answer within ${request.timeoutMs} ms`
      : `is unreachable at ${request.endpoint}: ${(error as Error).message}`;
    throw new SpeechError(`${request.provider} ${reason}`, 'provider');
  };
  try {
    let response: Response;
    try {
      response = await fetch(request.endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...request.headers },
        body: JSON.stringify(request.body),
        signal: AbortSignal.any([signal, idle.signal]),
      });
    } catch (error) {
      return failed(error);
    }
    if (!response.ok) {
      const text = await response.text().catch(() => '');
      throw new SpeechError(
        `${request.provider} answered ${response.status}: ${providerMessage(text)}`,
        failureOfStatus(response.status),
        response.status,
      );
    }
    if (!response.body) throw new SpeechError(`${request.provider} answered without audio`, 'provider');
    let bytes = 0;
    try {
      for await (const chunk of response.body) {
        rearm();
        bytes += chunk.byteLength;
        yield Buffer.from(chunk);
      }
    } catch (error) {
      failed(error);
    }
    if (bytes === 0) throw new SpeechError(`${request.provider} answered without audio`, 'provider');
  } finally {
    clearTimeout(timer);
  }
}
