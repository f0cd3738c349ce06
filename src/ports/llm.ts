/**
 * Large language models: streamed text generation behind one small interface. Models are named
 * `<provider>:<model>` (`openai:gpt-4o-mini`, `ollama:llama3.2`); the provider part is a name
 * from LLM_PROVIDERS.
 */

export interface LlmMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export interface LlmRequest {
  /** `<provider>:<model>`. */
  model: string;
  messages: LlmMessage[];
  /** 0–2. */
  temperature: number;
  /** Aborting it cancels the upstream request. */
  signal: AbortSignal;
  /** Called once with the tokens of the call when the provider reports them (not every provider does). */
  onUsage?: (usage: LlmUsage) => void;
}

/** Tokens of one call as the provider counted them. */
export interface LlmUsage {
  inputTokens: number | undefined;
  outputTokens: number | undefined;
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
   * Streams the reply as text deltas in the order the provider produces them. Throws LlmError
   * (from the iterator) when the provider fails, and stops when `signal` aborts.
   */
  stream(request: LlmRequest): AsyncIterable<string>;
}
