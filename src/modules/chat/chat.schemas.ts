import { Type, type Static } from '@sinclair/typebox';
import { Nullable, Page, SkipLimit, StringEnum, Timestamp, Uuid } from '../../http/schemas.js';

export const CONVERSATION_STATUSES = ['open', 'closed'] as const;

export const Conversation = Type.Object(
  {
    id: Uuid(),
    agent_id: Uuid({ description: 'the agent answering the conversation (a workflow moves it on a hand-off)' }),
    workflow_id: Nullable(Uuid({ description: 'the workflow whose agent_key reached the conversation' })),
    deployment_id: Nullable(Uuid()),
    title: Type.String(),
    status: StringEnum(CONVERSATION_STATUSES),
    user: Nullable(Type.String({ description: "the end user's external id" })),
    channel: Nullable(Type.String()),
    region: Nullable(Type.String()),
    support_query_id: Nullable(Uuid()),
    message_count: Type.Integer(),
    last_message_at: Nullable(Timestamp()),
    closed_at: Nullable(Timestamp()),
    created_at: Timestamp(),
    updated_at: Timestamp(),
  },
  { $id: 'Conversation' },
);
export type Conversation = Static<typeof Conversation>;

const UserId = Type.String({ minLength: 1, maxLength: 200, description: 'End-user id of your system' });

/** Bodies and forms refuse unknown fields (a 400 naming them): ids and tenancy are never input. */
const closed = { additionalProperties: false } as const;

export const CreateConversationBody = Type.Object(
  {
    agent_id: Uuid(),
    deployment_id: Type.Optional(Uuid()),
    title: Type.Optional(Type.String({ maxLength: 200 })),
    user: Type.Optional(UserId),
  },
  closed,
);
export type CreateConversationBody = Static<typeof CreateConversationBody>;

export const ListConversationsQuery = Type.Object({
  ...SkipLimit(20, 100),
  agent_id: Type.Optional(Uuid()),
  user: Type.Optional(UserId),
  status: Type.Optional(StringEnum(CONVERSATION_STATUSES)),
});
export type ListConversationsQuery = Static<typeof ListConversationsQuery>;

export const UpdateConversationBody = Type.Object(
  {
    title: Type.Optional(Type.String({ maxLength: 200 })),
    status: Type.Optional(
      StringEnum(CONVERSATION_STATUSES, {
        description: 'closed ends the conversation (and its support query) for good',
      }),
    ),
  },
  { minProperties: 1, ...closed },
);
export type UpdateConversationBody = Static<typeof UpdateConversationBody>;

export const ConversationParams = Type.Object({ conversationId: Uuid() });

export const Citation = Type.Object({
  chunk_id: Type.String(),
  document_id: Type.String(),
  title: Type.String(),
  collection_id: Nullable(Type.String()),
  score: Type.Number(),
  text: Type.String(),
});

export const Message = Type.Object(
  {
    id: Uuid(),
    conversation_id: Uuid(),
    role: StringEnum(['user', 'assistant', 'human'] as const, {
      description: '`human`: a person of the team answering during a hand-off',
    }),
    content: Type.String(),
    citations: Type.Array(Citation),
    model: Nullable(Type.String()),
    agent_id: Nullable(
      Uuid({ description: 'The agent that wrote an answer (a workflow hands conversations between agents)' }),
    ),
    was_resolved: Nullable(Type.Boolean()),
    response_time_ms: Nullable(Type.Integer()),
    finish_reason: Nullable(StringEnum(['stop', 'aborted', 'error'] as const)),
    author_id: Type.Optional(Nullable(Uuid({ description: 'The person who wrote a `human` message' }))),
    created_at: Timestamp(),
  },
  { $id: 'ChatMessage' },
);
export type Message = Static<typeof Message>;

export const MessagesQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 50, description: 'Page size (default 50, max 100).' }),
  cursor: Type.Optional(Type.String({ maxLength: 100, description: 'next_cursor of the previous page' })),
  order: StringEnum(['asc', 'desc'] as const, { default: 'asc', description: 'asc: oldest first; desc: newest first' }),
});
export type MessagesQuery = Static<typeof MessagesQuery>;

export const MessagePage = Type.Object({
  data: Type.Array(Type.Ref(Message)),
  next_cursor: Nullable(Type.String({ description: 'pass as cursor for the next page; null on the last page' })),
  limit: Type.Integer(),
});
export type MessagePage = Static<typeof MessagePage>;

export const FeedbackBody = Type.Object(
  {
    rating: Type.Integer({ minimum: 1, maximum: 5 }),
    comment: Type.Optional(Type.String({ maxLength: 4000 })),
  },
  closed,
);
export type FeedbackBody = Static<typeof FeedbackBody>;

export const Feedback = Type.Object({
  id: Uuid(),
  conversation_id: Uuid(),
  rating: Type.Integer(),
  comment: Type.String(),
  created_at: Timestamp(),
  updated_at: Timestamp(),
});
export type Feedback = Static<typeof Feedback>;

export const ConversationPage = Page(Type.Ref(Conversation));

/**
 * The chat form (multipart, or the same fields as JSON). `audio` is a file part; with JSON it
 * cannot be sent.
 */
export const ChatForm = Type.Object(
  {
    agent_key: Type.String({ minLength: 1, maxLength: 300, description: 'agent:<agent uuid>:<channel>:<region slug>' }),
    query: Type.Optional(
      Type.String({ maxLength: 8000, description: "the user's message; optional when audio is sent" }),
    ),
    messages: Type.Optional(
      Type.Union([Type.String({ maxLength: 500_000 }), Type.Array(Type.Unknown(), { maxItems: 200 })], {
        description:
          'earlier turns kept by the client: a JSON array of {role: user|assistant, content} as text (a JSON body may send the array itself)',
      }),
    ),
    conversation_id: Type.Optional(Type.String({ maxLength: 100, description: 'continue a stored conversation' })),
    user: Type.Optional(Type.String({ maxLength: 200, description: 'end-user id of your system' })),
    audio: Type.Optional(
      Type.Unsafe<AudioPart>({ description: 'an audio file to transcribe as the query (multipart only)' }),
    ),
  },
  closed,
);
export type ChatForm = Static<typeof ChatForm>;

export interface AudioPart {
  buffer: Buffer;
  filename: string;
  mimetype: string;
}

export const ChatResponse = Type.Object({
  conversation_id: Type.String(),
  agent_response_text: Type.String(),
  response_time_ms: Type.Integer(),
  was_resolved: Type.Boolean(),
  handoff: Type.Optional(
    Type.Literal(true, {
      description: 'The conversation is with a person: the message was stored for them, with no agent answer',
    }),
  ),
  status: Type.Optional(
    StringEnum(['waiting', 'assigned'] as const, {
      description: 'With handoff: waiting for a person, or a person answers',
    }),
  ),
});
export type ChatResponse = Static<typeof ChatResponse>;

/** The data of each server-sent event, as documented in OpenAPI (the stream itself is SSE text). */
export const StreamEventSchema = Type.Object(
  {
    type: StringEnum(['start', 'transcribed_text', 'agent_text_chunk', 'chunk', 'end', 'error'] as const),
    content: Type.String(),
    conversation_id: Type.String(),
  },
  {
    additionalProperties: true,
    description:
      'text/event-stream: `event: <type>` and `data: <this object>` per event; start, [transcribed_text], agent_text_chunk…, [chunk], end (error, end on failure); `: heartbeat` comments',
  },
);

/** The data of a conversation event (`GET /conversations/{id}/events`, the inbox's stream). */
export const ConversationEventSchema = Type.Object(
  {
    id: Type.String(),
    type: StringEnum(['handoff', 'message', 'delivery', 'resync'] as const),
    conversation_id: Nullable(Type.String()),
  },
  {
    additionalProperties: true,
    description:
      'text/event-stream: `handoff` {status: bot|handoff|assigned|closed, reason, assignee_id, actor_id}; `message` {message: {id, role, content, author_id, delivery_status, delivery_error, created_at}}; `delivery` {message_id, delivery_status, delivery_error}; `resync` (events may have been missed: read again)',
  },
);

/** One server-sent event's data. */
export interface StreamEvent {
  type: 'start' | 'transcribed_text' | 'agent_text_chunk' | 'chunk' | 'end' | 'error';
  content: string;
  conversation_id: string;
  [extra: string]: unknown;
}
