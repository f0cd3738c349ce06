/**
 * OpenAI's chat-completions and models objects, as far as the `/v1` endpoint takes and gives them.
 * The request body is closed like every body of the service, but it names the documented OpenAI
 * request fields this endpoint does not use (`n`, `top_p`, `presence_penalty` …) so that clients
 * that always send them (LangChain, Open WebUI) are served; they are accepted and ignored.
 */
import { Type, type Static } from '@sinclair/typebox';
import { Nullable, StringEnum } from '../../http/schemas.js';

const closed = { additionalProperties: false } as const;

/** A content part; only `text` is served (checked by the service so that the 400 names the part). */
const ContentPart = Type.Object(
  { type: Type.String({ maxLength: 50 }) },
  { additionalProperties: true, description: '{type: "text", text}; image, audio and file parts are refused' },
);

export const ChatCompletionMessage = Type.Object(
  {
    role: StringEnum(['system', 'developer', 'user', 'assistant'] as const),
    content: Type.Union([Type.String({ maxLength: 100_000 }), Type.Array(ContentPart, { maxItems: 50 }), Type.Null()]),
    name: Type.Optional(Type.String({ maxLength: 200, description: 'accepted and ignored' })),
  },
  closed,
);
export type ChatCompletionMessage = Static<typeof ChatCompletionMessage>;

const ignored = (description = 'accepted and ignored (OpenAI request field this endpoint does not use)') =>
  Type.Optional(Type.Unknown({ description }));

export const ChatCompletionBody = Type.Object(
  {
    model: Type.String({
      minLength: 1,
      maxLength: 300,
      description: "an agent key (agent:<agent uuid>:<channel>:<region>), or a bound token's agent id (GET /v1/models)",
    }),
    messages: Type.Array(ChatCompletionMessage, {
      minItems: 1,
      maxItems: 200,
      description:
        "the last user message is the turn's query, the user/assistant messages before it the history; system and developer messages are accepted and not sent (the agent's instructions are the system prompt)",
    }),
    stream: Type.Optional(Nullable(Type.Boolean())),
    stream_options: Type.Optional(
      Nullable(Type.Object({ include_usage: Type.Optional(Type.Boolean()), include_obfuscation: ignored() }, closed)),
    ),
    user: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'the end user (your id for them)' })),
    temperature: Type.Optional(
      Nullable(Type.Number({ minimum: 0, maximum: 2, description: "model agents: instead of the agent's own" })),
    ),
    max_tokens: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 1_000_000 }))),
    max_completion_tokens: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 1_000_000 }))),
    metadata: Type.Optional(
      Nullable(
        Type.Record(Type.String({ maxLength: 64 }), Type.String({ maxLength: 512 }), {
          maxProperties: 16,
          description: 'string map; `conversation_id` continues a stored conversation of the chat family',
        }),
      ),
    ),
    n: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 1, description: 'one choice only' }))),
    tools: Type.Optional(
      Nullable(Type.Array(Type.Unknown(), { maxItems: 0, description: "the agent's own tools run on the platform" })),
    ),
    tool_choice: Type.Optional(Nullable(StringEnum(['none', 'auto'] as const))),
    frequency_penalty: ignored(),
    presence_penalty: ignored(),
    top_p: ignored(),
    stop: ignored(),
    seed: ignored(),
    logit_bias: ignored(),
    logprobs: ignored(),
    top_logprobs: ignored(),
    parallel_tool_calls: ignored(),
    response_format: ignored(),
    service_tier: ignored(),
    store: ignored(),
    reasoning_effort: ignored(),
    modalities: ignored(),
    prediction: ignored(),
    verbosity: ignored(),
    safety_identifier: ignored(),
    prompt_cache_key: ignored(),
  },
  closed,
);
export type ChatCompletionBody = Static<typeof ChatCompletionBody>;

const Citation = Type.Object({
  chunk_id: Type.String(),
  document_id: Type.String(),
  title: Type.String(),
  collection_id: Nullable(Type.String()),
  score: Type.Number(),
  text: Type.String(),
});

const ToolActivity = Type.Object({
  tool: Type.String(),
  status: Type.String(),
  summary: Type.String(),
});

/** The platform's extension field: plain OpenAI clients ignore it. */
export const Switchboard = Type.Object(
  {
    conversation_id: Type.Optional(Type.String()),
    message_id: Type.Optional(Nullable(Type.String())),
    was_resolved: Type.Optional(Type.Boolean()),
    citations: Type.Optional(Type.Array(Citation)),
    tool: Type.Optional(ToolActivity),
    tools: Type.Optional(Type.Array(ToolActivity)),
  },
  { description: "Switchboard's extension: the conversation, citations and tool activity of the turn" },
);
export type Switchboard = Static<typeof Switchboard>;

export const Usage = Type.Object({
  prompt_tokens: Type.Integer(),
  completion_tokens: Type.Integer(),
  total_tokens: Type.Integer(),
});
export type Usage = Static<typeof Usage>;

export const ChatCompletion = Type.Object({
  id: Type.String({ examples: ['chatcmpl-3fa85f64-5717-4562-b3fc-2c963f66afa6'] }),
  object: Type.Literal('chat.completion'),
  created: Type.Integer(),
  model: Type.String(),
  choices: Type.Array(
    Type.Object({
      index: Type.Integer(),
      message: Type.Object({ role: Type.Literal('assistant'), content: Type.String(), refusal: Type.Null() }),
      logprobs: Type.Null(),
      finish_reason: Type.String({ examples: ['stop'] }),
    }),
  ),
  usage: Usage,
  system_fingerprint: Type.Null(),
  switchboard: Switchboard,
});
export type ChatCompletion = Static<typeof ChatCompletion>;

export const Model = Type.Object({
  id: Type.String({ examples: ['agent:3fa85f64-5717-4562-b3fc-2c963f66afa6:web:us-east'] }),
  object: Type.Literal('model'),
  created: Type.Integer(),
  owned_by: Type.String(),
});
export type Model = Static<typeof Model>;

export const ModelList = Type.Object({ object: Type.Literal('list'), data: Type.Array(Model) });
export type ModelList = Static<typeof ModelList>;
