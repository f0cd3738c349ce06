/** Request and response schemas of the inbox (`/api/public/conversations`, DESIGN §13). */
import { Type, type Static } from '@sinclair/typebox';
import { Nullable, Page, SkipLimit, StringEnum, Timestamp, Uuid } from '../../http/schemas.js';

export const INBOX_STATUSES = ['bot', 'handoff', 'assigned', 'closed'] as const;

/** The longest reply a person may send (characters). */
export const MAX_REPLY_CHARS = 4000;

/** Bodies refuse unknown fields (a 400 naming them). */
const closed = { additionalProperties: false } as const;

export const InboxConversation = Type.Object(
  {
    id: Uuid(),
    status: StringEnum(INBOX_STATUSES, {
      description: 'bot: the agent answers; handoff: waiting for a person; assigned: a person answers; closed',
    }),
    channel: Nullable(Type.String()),
    agent_id: Uuid(),
    assignee_id: Nullable(Uuid({ description: 'The person answering (status assigned)' })),
    support_query_id: Nullable(Uuid()),
    user: Nullable(Type.String({ description: "The customer's id as the channel knows it" })),
    created_at: Timestamp(),
    updated_at: Timestamp(),
  },
  { $id: 'InboxConversation' },
);
export type InboxConversation = Static<typeof InboxConversation>;

export const InboxMessage = Type.Object(
  {
    id: Uuid(),
    role: StringEnum(['user', 'assistant', 'human'] as const, {
      description: 'user: the customer; assistant: the agent; human: a person of the team',
    }),
    content: Type.String(),
    author_id: Nullable(Uuid({ description: 'The person who wrote a human message' })),
    delivery_status: Nullable(
      StringEnum(['pending', 'delivered', 'failed'] as const, {
        description: "A human message's delivery on the conversation's channel",
      }),
    ),
    delivery_error: Nullable(Type.String({ description: 'Why the delivery failed' })),
    created_at: Timestamp(),
  },
  { $id: 'InboxMessage' },
);
export type InboxMessage = Static<typeof InboxMessage>;

export const InboxConversationDetail = Type.Object({
  id: Uuid(),
  status: StringEnum(INBOX_STATUSES),
  channel: Nullable(Type.String()),
  agent_id: Uuid(),
  assignee_id: Nullable(Uuid()),
  support_query_id: Nullable(Uuid()),
  user: Nullable(Type.String()),
  created_at: Timestamp(),
  updated_at: Timestamp(),
  title: Type.String(),
  handoff_reason: Nullable(Type.String({ description: 'Why the conversation went to a person' })),
  message_count: Type.Integer(),
  messages: Type.Array(Type.Ref(InboxMessage), {
    description: 'The latest 100 messages, oldest first',
  }),
});
export type InboxConversationDetail = Static<typeof InboxConversationDetail>;

export const InboxPage = Page(Type.Ref(InboxConversation));

export const ListInboxQuery = Type.Object({
  ...SkipLimit(50, 100),
  status: Type.Optional(StringEnum(INBOX_STATUSES)),
  channel: Type.Optional(Type.String({ minLength: 1, maxLength: 50 })),
  agent_id: Type.Optional(Uuid()),
  assignee_id: Type.Optional(Uuid()),
  q: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 200,
      description: "Text searched in the conversation's title, customer id and messages (case-insensitive)",
    }),
  ),
});
export type ListInboxQuery = Static<typeof ListInboxQuery>;

export const InboxParams = Type.Object({ conversationId: Uuid() });

export const EventsQuery = Type.Object({
  conversation_id: Type.Optional(Uuid({ description: "One conversation's events only" })),
});

export const AssignBody = Type.Object(
  { assignee_id: Type.Optional(Uuid({ description: 'A developer (or above) of the company; omitted: yourself' })) },
  closed,
);
export type AssignBody = Static<typeof AssignBody>;

export const ReplyBody = Type.Object(
  { content: Type.String({ minLength: 1, maxLength: MAX_REPLY_CHARS, description: 'The reply to the customer' }) },
  closed,
);
export type ReplyBody = Static<typeof ReplyBody>;

export const CloseBody = Type.Object(
  {
    resolution: Type.Optional(
      Type.String({ maxLength: 2000, description: "How it was resolved (the support query's resolution)" }),
    ),
  },
  closed,
);
export type CloseBody = Static<typeof CloseBody>;

export const EmptyBody = Type.Object({}, closed);

export const ReplyMessage = Type.Object({
  id: Uuid(),
  role: Type.Literal('human'),
  content: Type.String(),
  author_id: Uuid(),
  created_at: Timestamp(),
  delivery_status: StringEnum(['pending', 'delivered', 'failed'] as const, {
    description: "delivered: the customer's channel accepted it; failed: see delivery_error (the reply is kept)",
  }),
  delivery_error: Nullable(Type.String()),
});
