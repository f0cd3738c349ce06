import { Type, type Static } from '@sinclair/typebox';
import { Nullable, Page, StringEnum, Timestamp, Uuid } from '../../http/schemas.js';
import { Member, RoleSchema } from '../companies/index.js';

export const User = Type.Object(
  {
    id: Uuid(),
    email: Type.String(),
    first_name: Type.String(),
    last_name: Type.String(),
    created_at: Timestamp(),
  },
  { $id: 'User' },
);
export type User = Static<typeof User>;

export const Me = Type.Object({
  ...User.properties,
  active_company_id: Nullable(Uuid()),
  role: Nullable(RoleSchema),
  memberships: Type.Array(
    Type.Object({
      id: Uuid(),
      company_id: Uuid(),
      company_name: Type.String(),
      role: RoleSchema,
      joined_at: Timestamp(),
    }),
  ),
});
export type Me = Static<typeof Me>;

export const ApiKey = Type.Object(
  {
    id: Uuid(),
    name: Type.String(),
    hint: Type.String({ description: 'prefix and last four characters, e.g. sk_••••a1b2' }),
    created_at: Timestamp(),
  },
  { $id: 'ApiKey' },
);
export type ApiKey = Static<typeof ApiKey>;

export const CreatedApiKey = Type.Object({
  ...ApiKey.properties,
  key: Type.String({ description: 'the secret, shown once: send it as x-api-key' }),
});
export type CreatedApiKey = Static<typeof CreatedApiKey>;

export const ChatToken = Type.Object(
  {
    id: Uuid(),
    name: Type.String(),
    agent_id: Nullable(Uuid()),
    hint: Type.String(),
    created_by: Nullable(Uuid()),
    created_at: Timestamp(),
  },
  { $id: 'ChatToken' },
);
export type ChatToken = Static<typeof ChatToken>;

export const CreatedChatToken = Type.Object({
  ...ChatToken.properties,
  token: Type.String({ description: 'the secret, shown once: send it as x-api-token' }),
});
export type CreatedChatToken = Static<typeof CreatedChatToken>;

/** Bodies refuse unknown fields (a 400 naming them): ids, tenancy and timestamps are never input. */
const closed = { additionalProperties: false } as const;

export const CreateUserBody = Type.Object(
  {
    email: Type.String({ format: 'email', maxLength: 320 }),
    name: Type.Optional(Type.String({ maxLength: 200, description: 'full name; split into first and last name' })),
    first_name: Type.Optional(Type.String({ maxLength: 100 })),
    last_name: Type.Optional(Type.String({ maxLength: 100 })),
    role: Type.Optional(
      StringEnum(['owner', 'admin', 'developer', 'member'] as const, {
        description: 'when given, the user also becomes a member of the current company with this role',
      }),
    ),
  },
  closed,
);

export const CreatedUser = Type.Object({
  user: Type.Ref(User),
  member: Nullable(Type.Ref(Member)),
  api_key: CreatedApiKey,
});

export const CreateApiKeyBody = Type.Object({ name: Type.Optional(Type.String({ maxLength: 200 })) }, closed);

export const CreateChatTokenBody = Type.Object(
  {
    name: Type.Optional(Type.String({ maxLength: 200 })),
    agent_id: Type.Optional(Nullable(Uuid({ description: 'bind the token to one agent of the company' }))),
  },
  closed,
);

export const ApiKeyPage = Page(Type.Ref(ApiKey));
export const ChatTokenPage = Page(Type.Ref(ChatToken));

export const SignedIn = Type.Object(
  {
    user: Type.Ref(User),
    csrf_token: Type.String({
      description: 'send it as x-csrf-token with every write that relies on the session cookie',
    }),
    expires_at: Timestamp({ description: 'the latest the session ends (it ends sooner when left unused)' }),
  },
  { description: 'A console session: the cookie is set by this response (HttpOnly, SameSite=Lax).' },
);
export type SignedIn = Static<typeof SignedIn>;

const Email = Type.String({ format: 'email', maxLength: 320 });
const NewPassword = Type.String({
  minLength: 1,
  maxLength: 1024,
  description: 'at least 12 and at most 128 characters; common or breached passwords are refused',
});

export const SignInBody = Type.Object(
  { email: Email, password: Type.String({ minLength: 1, maxLength: 1024 }) },
  closed,
);

export const AcceptInvitationBody = Type.Object(
  {
    token: Type.String({ minLength: 1, maxLength: 200, description: 'the inv_… token of the invitation' }),
    password: NewPassword,
    first_name: Type.Optional(Type.String({ maxLength: 100 })),
    last_name: Type.Optional(Type.String({ maxLength: 100 })),
  },
  closed,
);

export const PasswordResetBody = Type.Object({ email: Email }, closed);

export const SetPasswordBody = Type.Object(
  {
    token: Type.String({ minLength: 1, maxLength: 200, description: 'the pw_… token of the link' }),
    password: NewPassword,
  },
  closed,
);
