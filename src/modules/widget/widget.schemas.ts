import { Type, type Static } from '@sinclair/typebox';
import { Nullable, StringEnum, Timestamp, Uuid } from '../../http/schemas.js';
import { POSITIONS, THEMES } from './widget.settings.js';

/** Bodies refuse unknown fields (a 400 naming them). */
const closed = { additionalProperties: false } as const;

export const WidgetSettingsSchema = Type.Object({
  allowed_origins: Type.Array(Type.String(), {
    description: 'exact origins allowed to use the widget (none: no browser origin may)',
  }),
  title: Type.String(),
  greeting: Type.String(),
  color: Type.String({ examples: ['#2563eb'] }),
  position: StringEnum(POSITIONS),
  placeholder: Type.String(),
  language: Type.String({ examples: ['en', 'ar'] }),
  theme: StringEnum(THEMES),
  identity_secret: Nullable(
    Type.String({ description: `"********" when set (the secret is never shown again); null when none` }),
  ),
});

export const WidgetKeyInfo = Type.Object({
  deployment_id: Uuid(),
  key: Type.String({ description: 'the publishable widget key (pk_…): not a secret, it sits in your pages' }),
  snippet: Type.String({ description: 'the script tag to paste into your pages' }),
  settings: WidgetSettingsSchema,
});
export type WidgetKeyInfo = Static<typeof WidgetKeyInfo>;

export const WidgetInfo = Type.Object({
  title: Type.String(),
  greeting: Type.String(),
  color: Type.String(),
  position: StringEnum(POSITIONS),
  placeholder: Type.String(),
  language: Type.String(),
  direction: StringEnum(['ltr', 'rtl'] as const),
  theme: StringEnum(THEMES),
  available: Type.Boolean({ description: 'false while the deployment is not active (paused, stopped …)' }),
});
export type WidgetInfo = Static<typeof WidgetInfo>;

export const KeyParams = Type.Object({
  key: Type.String({ minLength: 1, maxLength: 100, description: 'the publishable widget key (pk_…)' }),
});
export const ConversationParams = Type.Object({
  key: KeyParams.properties.key,
  conversationId: Uuid(),
});

const short = (max: number, description: string) => Type.String({ minLength: 1, maxLength: max, description });

export const SessionBody = Type.Object(
  {
    user_id: Type.Optional(short(200, "the signed-in customer's id in your system")),
    name: Type.Optional(short(200, "the customer's name")),
    email: Type.Optional(Type.String({ maxLength: 320, format: 'email', description: "the customer's e-mail" })),
    user_hash: Type.Optional(
      Type.String({ maxLength: 128, description: 'HMAC-SHA256(identity_secret, user_id) in hex, made by your server' }),
    ),
    email_hash: Type.Optional(
      Type.String({
        maxLength: 128,
        description:
          "HMAC-SHA256(identity_secret, email) in hex, made by your server: the e-mail is the customer's too, and the agent's tools may use it (look up their orders)",
      }),
    ),
  },
  closed,
);
export type SessionBody = Static<typeof SessionBody>;

export const Session = Type.Object({
  visitor_token: Type.String({ description: 'keep it (localStorage) and send it as Authorization: Bearer' }),
  visitor_id: Uuid(),
  identified: Type.Boolean({ description: 'true when user_hash proved the user_id' }),
});

export const MessageBody = Type.Object(
  {
    text: Type.Optional(
      Type.String({ maxLength: 4000, description: "the visitor's message (required unless resuming)" }),
    ),
    conversation_id: Type.Optional(Uuid({ description: 'continue this conversation of the visitor' })),
  },
  closed,
);
export type MessageBody = Static<typeof MessageBody>;

export const MessageHeaders = Type.Object({
  'last-event-id': Type.Optional(
    Type.String({ maxLength: 200, description: 'resume the streamed answer of this event id (no new turn)' }),
  ),
});

const CitationLink = Type.Object({
  document_id: Type.String(),
  title: Type.String(),
  url: Nullable(Type.String({ description: "the document's web address when it came from one" })),
});

export const WidgetMessage = Type.Object({
  id: Uuid(),
  role: StringEnum(['user', 'assistant', 'human'] as const, {
    description: "human: a person's reply (hand-off)",
  }),
  content: Type.String(),
  created_at: Timestamp(),
  citations: Type.Optional(Type.Array(CitationLink)),
});
export type WidgetMessage = Static<typeof WidgetMessage>;

export const MessageResult = Type.Object({ conversation_id: Uuid(), message: WidgetMessage });

export const HistoryQuery = Type.Object({
  conversation_id: Type.Optional(Uuid({ description: "the visitor's conversation; default: its latest" })),
});

export const History = Type.Object({
  conversation_id: Nullable(Uuid()),
  data: Type.Array(WidgetMessage),
});

export const FeedbackBody = Type.Object(
  {
    rating: Type.Integer({ minimum: 1, maximum: 5 }),
    comment: Type.Optional(Type.String({ maxLength: 2000 })),
  },
  closed,
);

export const FeedbackResult = Type.Object({
  conversation_id: Uuid(),
  rating: Type.Integer(),
  comment: Type.String(),
  updated_at: Timestamp(),
});

export const DeploymentParams = Type.Object({ deploymentId: Uuid() });
