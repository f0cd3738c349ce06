/**
 * OpenAI's Responses API (`POST /v1/responses`) and embeddings (`POST /v1/embeddings`) objects, as
 * far as `/v1` takes and gives them. Bodies are closed like every body of the service; the
 * documented request fields the endpoint does not use are named, accepted and ignored, so that
 * clients that always send them (the official SDKs, the AI SDK) are served.
 */
import { Type, type Static } from '@sinclair/typebox';
import { Nullable, StringEnum } from '../../http/schemas.js';
import { Switchboard } from './openai-api.schemas.js';

const closed = { additionalProperties: false } as const;
const ignored = (description = 'accepted and ignored (OpenAI request field this endpoint does not use)') =>
  Type.Optional(Type.Unknown({ description }));

/** A content part of an input message; text parts only (checked by the service, so the 400 names the part). */
const InputPart = Type.Object(
  { type: Type.String({ maxLength: 50 }) },
  {
    additionalProperties: true,
    description: '{type: "input_text" | "output_text", text}; images and files are refused',
  },
);

/** An input item: a message (`type` omitted or `message`); other item types are refused by name. */
const InputItem = Type.Object(
  {
    type: Type.Optional(Type.String({ maxLength: 50 })),
    role: Type.Optional(StringEnum(['user', 'assistant', 'system', 'developer'] as const)),
    content: Type.Optional(Type.Union([Type.String({ maxLength: 100_000 }), Type.Array(InputPart, { maxItems: 50 })])),
    id: Type.Optional(Type.String({ maxLength: 200, description: 'accepted and ignored' })),
    status: Type.Optional(Type.String({ maxLength: 50, description: 'accepted and ignored' })),
  },
  { additionalProperties: true, description: 'a message item; function calls, reasoning and references are refused' },
);
export type InputItem = Static<typeof InputItem>;

export const ResponseBody = Type.Object(
  {
    model: Type.String({
      minLength: 1,
      maxLength: 300,
      description: "an agent key (agent:<agent uuid>:<channel>:<region>), or a bound token's agent id (GET /v1/models)",
    }),
    input: Type.Union([Type.String({ maxLength: 100_000 }), Type.Array(InputItem, { minItems: 1, maxItems: 200 })], {
      description:
        'the query as text, or messages whose last user message is the query (the user/assistant messages before it: the history of a new conversation); system and developer messages are accepted and not sent',
    }),
    instructions: Type.Optional(
      Nullable(
        Type.String({
          maxLength: 100_000,
          description: "accepted and not sent: the agent's own instructions are the system prompt",
        }),
      ),
    ),
    previous_response_id: Type.Optional(
      Nullable(Type.String({ maxLength: 100, description: "continues that response's conversation" })),
    ),
    stream: Type.Optional(Nullable(Type.Boolean())),
    store: Type.Optional(
      Nullable(
        Type.Boolean({
          description:
            'accepted; every turn is recorded as the platform records every customer query (a conversation and its support query), so a response can always be continued',
        }),
      ),
    ),
    user: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'the end user (your id for them)' })),
    metadata: Type.Optional(
      Nullable(
        Type.Record(Type.String({ maxLength: 64 }), Type.String({ maxLength: 512 }), {
          maxProperties: 16,
          description: 'string map, returned on the response',
        }),
      ),
    ),
    temperature: Type.Optional(
      Nullable(Type.Number({ minimum: 0, maximum: 2, description: "model agents: instead of the agent's own" })),
    ),
    max_output_tokens: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 1_000_000 }))),
    tools: Type.Optional(
      Nullable(Type.Array(Type.Unknown(), { maxItems: 0, description: "the agent's own tools run on the platform" })),
    ),
    tool_choice: Type.Optional(Nullable(StringEnum(['none', 'auto'] as const))),
    background: Type.Optional(Nullable(Type.Boolean({ description: 'false only: responses are answered at once' }))),
    top_p: ignored(),
    parallel_tool_calls: ignored(),
    max_tool_calls: ignored(),
    reasoning: ignored(),
    text: ignored(),
    truncation: ignored(),
    include: ignored(),
    service_tier: ignored(),
    prompt_cache_key: ignored(),
    safety_identifier: ignored(),
    top_logprobs: ignored(),
    stream_options: ignored(),
  },
  closed,
);
export type ResponseBody = Static<typeof ResponseBody>;

const OutputText = Type.Object({
  type: Type.Literal('output_text'),
  text: Type.String(),
  annotations: Type.Array(Type.Unknown()),
});

const OutputMessage = Type.Object({
  type: Type.Literal('message'),
  id: Type.String(),
  status: Type.String({ examples: ['completed'] }),
  role: Type.Literal('assistant'),
  content: Type.Array(OutputText),
});

export const ResponseUsage = Type.Object({
  input_tokens: Type.Integer(),
  input_tokens_details: Type.Object({ cached_tokens: Type.Integer() }),
  output_tokens: Type.Integer(),
  output_tokens_details: Type.Object({ reasoning_tokens: Type.Integer() }),
  total_tokens: Type.Integer(),
});
export type ResponseUsage = Static<typeof ResponseUsage>;

export const ResponseObject = Type.Object({
  id: Type.String({ examples: ['resp_3fa85f64-5717-4562-b3fc-2c963f66afa6'] }),
  object: Type.Literal('response'),
  created_at: Type.Integer(),
  status: StringEnum(['in_progress', 'completed', 'failed'] as const),
  error: Type.Null(),
  incomplete_details: Type.Null(),
  instructions: Nullable(Type.String()),
  max_output_tokens: Nullable(Type.Integer()),
  model: Type.String(),
  output: Type.Array(OutputMessage),
  output_text: Type.String(),
  parallel_tool_calls: Type.Boolean(),
  previous_response_id: Nullable(Type.String()),
  reasoning: Type.Object({ effort: Type.Null(), summary: Type.Null() }),
  store: Type.Boolean(),
  temperature: Nullable(Type.Number()),
  text: Type.Object({ format: Type.Object({ type: Type.Literal('text') }) }),
  tool_choice: Type.String(),
  tools: Type.Array(Type.Unknown()),
  top_p: Nullable(Type.Number()),
  truncation: Type.String(),
  usage: Nullable(ResponseUsage),
  user: Nullable(Type.String()),
  metadata: Type.Record(Type.String(), Type.String()),
  switchboard: Switchboard,
});
export type ResponseObject = Static<typeof ResponseObject>;

export const EmbeddingBody = Type.Object(
  {
    model: Type.String({ minLength: 1, maxLength: 300, description: 'the embedding model GET /v1/models lists' }),
    input: Type.Union(
      [
        Type.String({ minLength: 1, maxLength: 32_000 }),
        Type.Array(Type.String({ minLength: 1, maxLength: 32_000 }), { minItems: 1, maxItems: 256 }),
      ],
      { description: 'text or texts (token arrays are not accepted)' },
    ),
    encoding_format: Type.Optional(Nullable(StringEnum(['float', 'base64'] as const))),
    dimensions: Type.Optional(
      Nullable(Type.Integer({ minimum: 1, maximum: 16_384, description: "the model's own dimensions only" })),
    ),
    user: ignored(),
  },
  closed,
);
export type EmbeddingBody = Static<typeof EmbeddingBody>;

export const EmbeddingList = Type.Object({
  object: Type.Literal('list'),
  data: Type.Array(
    Type.Object({
      object: Type.Literal('embedding'),
      index: Type.Integer(),
      embedding: Type.Union([Type.Array(Type.Number()), Type.String()], {
        description: 'floats, or little-endian float32 bytes in base64 (encoding_format: base64)',
      }),
    }),
  ),
  model: Type.String(),
  usage: Type.Object({ prompt_tokens: Type.Integer(), total_tokens: Type.Integer() }),
});
export type EmbeddingList = Static<typeof EmbeddingList>;
