/**
 * The ElevenLabs account's voices (`GET {baseUrl}/v1/voices`, header `xi-api-key` →
 * `{ voices: [{ voice_id, name, category, labels }] }`), cached for `ttlMs` so that writes and
 * syntheses do not ask on every request. One fetch at a time: callers during a refresh share it.
 * Implements the voice agents module's ProviderVoices.
 */
import { startTimeLimit } from '../../lib/abort-limit.js';
import { SpeechError } from '../../ports/speech.js';

export interface ElevenLabsVoicesOptions {
  apiKey: string;
  baseUrl: string;
  timeoutMs: number;
  /** How long a fetched list is trusted (default 10 minutes). */
  ttlMs?: number;
  now?: () => number;
}

export interface ElevenLabsVoices {
  hasVoice(voiceId: string, signal: AbortSignal): Promise<boolean>;
}

async function fetchVoiceIds(options: ElevenLabsVoicesOptions, signal: AbortSignal): Promise<Set<string>> {
  const endpoint = `${options.baseUrl.replace(/\/+$/, '')}/v1/voices`;
  // The limit covers the list's body too.
  const limit = startTimeLimit(signal, options.timeoutMs);
  try {
    let response: Response;
    try {
      response = await fetch(endpoint, {
        headers: { 'xi-api-key': options.apiKey, accept: 'application/json' },
        signal: limit.signal,
      });
    } catch (error) {
      if (signal.aborted) throw error;
      throw new SpeechError(`ElevenLabs voices are unreachable: ${(error as Error).message}`, 'provider');
    }
    if (!response.ok) {
      await response.body?.cancel();
      const failure = response.status === 401 || response.status === 403 ? 'unavailable' : 'provider';
      throw new SpeechError(`ElevenLabs answered ${response.status} to the voice list`, failure, response.status);
    }
    const body = (await response.json().catch(() => null)) as { voices?: { voice_id?: unknown }[] } | null;
    if (!body || !Array.isArray(body.voices)) throw new SpeechError('ElevenLabs returned no voice list', 'provider');
    return new Set(body.voices.map((voice) => voice.voice_id).filter((id): id is string => typeof id === 'string'));
  } finally {
    limit.release();
  }
}

export function createElevenLabsVoices(options: ElevenLabsVoicesOptions): ElevenLabsVoices {
  const ttlMs = options.ttlMs ?? 600_000;
  const now = options.now ?? Date.now;
  let cached: { ids: Set<string>; at: number } | null = null;
  let pending: Promise<Set<string>> | null = null;
  return {
    async hasVoice(voiceId, signal) {
      if (!cached || now() - cached.at > ttlMs) {
        pending ??= fetchVoiceIds(options, signal).finally(() => {
          pending = null;
        });
        cached = { ids: await pending, at: now() };
      }
      return cached.ids.has(voiceId);
    },
  };
}
