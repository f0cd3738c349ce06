/**
 * What a chat turn takes from the form beyond the schema: the earlier messages sent as JSON text,
 * and the transcript of an audio part (a speech failure becomes the chat error its cause calls for).
 */
import { AppError, AppErrors } from '../../http/errors.js';
import { findUnsafeInput } from '../../http/validation.js';
import type { LlmMessage } from '../../ports/llm.js';
import { SpeechError, type SpeechToText } from '../../ports/speech.js';
import type { AudioPart } from './chat.schemas.js';

/** The `messages` form field: a JSON array of earlier {role: user|assistant, content} turns. */
export function parseHistory(raw: string | unknown[] | undefined): LlmMessage[] {
  if (raw === undefined || (typeof raw === 'string' && raw.trim() === '')) return [];
  let parsed: unknown = raw;
  if (typeof raw === 'string') {
    try {
      parsed = JSON.parse(raw);
    } catch {
      throw AppErrors.validation("Invalid field 'messages': must be a JSON array of {role, content} objects");
    }
  }
  if (!Array.isArray(parsed)) throw AppErrors.validation("Invalid field 'messages': must be a JSON array");
  if (parsed.length > 200) throw AppErrors.validation("Invalid field 'messages': at most 200 messages");
  return parsed.map((item: unknown, index) => {
    const message = item as { role?: unknown; content?: unknown } | null;
    if (!message || (message.role !== 'user' && message.role !== 'assistant')) {
      throw AppErrors.validation(`Invalid field 'messages[${index}].role': must be one of: user, assistant`);
    }
    if (typeof message.content !== 'string')
      throw AppErrors.validation(`Invalid field 'messages[${index}].content': must be string`);
    // The history arrives as text, so the root pass over the form saw only its escapes (\u0000).
    const unsafe = findUnsafeInput(message.content);
    if (unsafe) throw AppErrors.validation(`Invalid field 'messages[${index}].content': ${unsafe.problem}`);
    return { role: message.role, content: message.content };
  });
}

/** The audio's transcript; a SpeechError becomes the chat error its cause calls for. */
export async function transcribe(stt: SpeechToText, audio: AudioPart, signal: AbortSignal): Promise<string> {
  try {
    return (await stt.transcribe(audio, signal)).text;
  } catch (error) {
    if (!(error instanceof SpeechError)) throw error;
    switch (error.failure) {
      case 'audio':
        throw AppErrors.validation(`Invalid field 'audio': ${error.message}`);
      case 'format':
        throw AppErrors.unsupportedMediaType(`Invalid field 'audio': ${error.message}`);
      case 'unavailable':
        throw AppErrors.unavailable(`Speech-to-text failed: ${error.message}`);
      case 'provider':
        throw new AppError(502, `Speech-to-text failed: ${error.message}`, 'BadGateway');
    }
  }
}
