/**
 * What a provider protocol is to the client: the request it sends for a reply, and a reader that
 * turns the events of its streamed answer into the port's parts (text deltas and whole tool calls).
 */
import type { LlmRequest, LlmStreamPart, LlmToolCall, LlmUsage } from '../../ports/llm.js';
import type { LlmErrors } from './llm-errors.js';

export interface WireRequest {
  /** Appended to the provider's base URL. */
  path: string;
  headers: Record<string, string>;
  body: string;
}

export interface StreamReader {
  /** One server-sent event: what it yields goes into `out`; an error event throws LlmError. */
  event(event: string, data: string, out: LlmStreamPart[]): void;
  /** The stream ended cleanly: tool calls still open go into `out`; returns the call's usage. */
  end(out: LlmStreamPart[]): LlmUsage;
}

export interface Protocol {
  defaultBaseUrl: string | undefined;
  request(request: LlmRequest, modelId: string, apiKey: string | undefined): WireRequest;
  reader(errors: LlmErrors): StreamReader;
}

/** The instructions of a request: its system messages, in order, as one text (empty: none). */
export function systemText(request: Pick<LlmRequest, 'messages'>): string {
  let system = '';
  for (const message of request.messages)
    if (message.role === 'system') system = system ? `${system}\n\n${message.content}` : message.content;
  return system;
}

/** A provider's tool call (input as JSON text) as the port's: the parsed object, or null. */
export function toToolCall(part: { toolCallId: string; toolName: string; input: string }): LlmToolCall {
  let input: Record<string, unknown> | null = null;
  try {
    const parsed: unknown = JSON.parse(part.input || '{}');
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) input = parsed as Record<string, unknown>;
  } catch {
    input = null;
  }
  return { type: 'tool-call', id: part.toolCallId, name: part.toolName, input };
}

/** An event's JSON, or an LlmError naming the event that is not. */
export function parseEvent(data: string, errors: LlmErrors): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(data);
    if (value && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // below
  }
  throw errors.inStream({ message: 'the stream sent an event that is not a JSON object' }, undefined, true);
}
