/**
 * Large language models: streamed text generation behind one small interface. Models are named
 * `<provider>:<model>` (`openai:gpt-4o-mini`, `ollama:llama3.2`); the provider part is a name
 * from LLM_PROVIDERS.
 */

export interface LlmMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
  /** An assistant message: the tools it called (its `content` is the text said before them). */
  toolCalls?: LlmToolCall[];
  /** A tool message: the call it answers (`content` is the result, data the model must not obey). */
  toolCallId?: string;
  toolName?: string;
  /** A tool message: the call failed (`content` says why). */
  isError?: boolean;
}

/** A tool the model may call: a name unique in the request ([a-zA-Z0-9_-], ≤ 64), a description, a JSON schema. */
export interface LlmTool {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

/** The model asks for a tool to run. `input` is its parsed JSON, or null when it was not a JSON object. */
export interface LlmToolCall {
  type: 'tool-call';
  id: string;
  name: string;
  input: Record<string, unknown> | null;
}

/** What a stream yields: text deltas (strings) and, when the request offers tools, tool calls. */
export type LlmStreamPart = string | LlmToolCall;

export interface LlmRequest {
  /** `<provider>:<model>`. */
  model: string;
  messages: LlmMessage[];
  /** 0–2. */
  temperature: number;
  /** The most tokens the reply may have (unset: the provider's default). */
  maxTokens?: number;
  /** Aborting it cancels the upstream request. */
  signal: AbortSignal;
  /** Tools the model may call (none: a plain reply). */
  tools?: LlmTool[];
  /** `none`: the tools stay declared (earlier calls in the messages refer to them) but may not be called. */
  toolChoice?: 'auto' | 'none';
  /** Called once with the tokens of the call when the provider reports them (not every provider does). */
  onUsage?: (usage: LlmUsage) => void;
}

/** Tokens of one call as the provider counted them. */
export interface LlmUsage {
  inputTokens: number | undefined;
  outputTokens: number | undefined;
}

/**
 * What a call's observer hears. Told by the client itself rather than by a wrapping generator: a
 * wrapper adds a generator, its frame, a copy of the request and closures to every open stream.
 */
export interface LlmCallObserver {
  /** The first part of the reply came, `seconds` after the call started. */
  firstPart(model: string, seconds: number): void;
  /** The tokens the provider reported for the call. */
  usage(model: string, usage: LlmUsage): void;
  /** The call is over: read to its end (`ok`), failed, or stopped by its signal. */
  ended(model: string, outcome: 'ok' | 'error' | 'aborted', seconds: number): void;
}

/** A failure of the provider, with whether trying again later may succeed. */
export class LlmError extends Error {
  override readonly name = 'LlmError';
  constructor(
    message: string,
    readonly retryable: boolean,
    /** The provider's HTTP status, when it answered with one. */
    readonly status?: number,
  ) {
    super(message);
  }
}

export interface LanguageModels {
  /** Provider names that are configured (empty: only the built-in responder exists). */
  providers(): string[];
  /**
   * Why `model` cannot be used, or null when it can: its provider must be configured and, when
   * the provider lists its models, the model must be one of them.
   */
  checkModel(model: string): string | null;
  /**
   * Streams the reply as text deltas in the order the provider produces them, and the tool calls
   * the model makes (each whole, once its input is complete). Throws LlmError (from the
   * iterator) when the provider fails, and stops when `signal` aborts.
   */
  stream(request: LlmRequest): AsyncIterable<LlmStreamPart>;
}
