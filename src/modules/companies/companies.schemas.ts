import { Type, type Static } from '@sinclair/typebox';
import { Nullable, Page, StringEnum, Timestamp, Uuid } from '../../http/schemas.js';
import { ROLES } from '../../lib/roles.js';

export const RoleSchema = StringEnum(ROLES, { description: 'owner > admin > developer > member' });

const text = (maxLength: number, description?: string) =>
  Nullable(Type.String({ maxLength, ...(description ? { description } : {}) }));

const companyFields = {
  industry: Type.Optional(text(200)),
  contact_email: Type.Optional(Nullable(Type.String({ format: 'email', maxLength: 320 }))),
  contact_phone: Type.Optional(text(50)),
  address: Type.Optional(text(500)),
  website: Type.Optional(text(500)),
  working_hours: Type.Optional(text(500, 'free text, e.g. "Sun–Thu 09:00–17:00 Asia/Riyadh"')),
};

/** Bodies refuse unknown fields (a 400 naming them): ids, tenancy and timestamps are never input. */
const closed = { additionalProperties: false } as const;

export const CreateCompanyBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    ...companyFields,
  },
  closed,
);
export type CreateCompanyBody = Static<typeof CreateCompanyBody>;

export const UpdateCompanyBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    ...companyFields,
  },
  closed,
);
export type UpdateCompanyBody = Static<typeof UpdateCompanyBody>;

export const Company = Type.Object(
  {
    id: Uuid(),
    name: Type.String(),
    industry: Nullable(Type.String()),
    contact_email: Nullable(Type.String()),
    contact_phone: Nullable(Type.String()),
    address: Nullable(Type.String()),
    website: Nullable(Type.String()),
    working_hours: Nullable(Type.String()),
    created_at: Timestamp(),
    updated_at: Timestamp(),
  },
  { $id: 'Company' },
);
export type Company = Static<typeof Company>;

export const MemberUser = Type.Object({
  id: Uuid(),
  email: Type.String(),
  first_name: Type.String(),
  last_name: Type.String(),
});

export const Member = Type.Object(
  {
    id: Uuid(),
    user_id: Uuid(),
    company_id: Uuid(),
    role: RoleSchema,
    joined_at: Timestamp(),
    user: MemberUser,
  },
  { $id: 'CompanyMember' },
);
export type Member = Static<typeof Member>;

export const AddMemberBody = Type.Object(
  {
    user_id: Uuid(),
    role: Type.Optional(StringEnum(['admin', 'developer', 'member'] as const, { default: 'member' })),
  },
  closed,
);

export const AddAdminBody = Type.Object({ user_id: Uuid() }, closed);

export const Invitation = Type.Object(
  {
    id: Uuid(),
    email: Type.String(),
    role: RoleSchema,
    message: Type.String(),
    status: StringEnum(['pending', 'accepted', 'expired', 'revoked'] as const),
    token: Type.String({
      description:
        'The invitation token: in full only in the response that creates it (and in the e-mail); masked afterwards',
    }),
    expires_at: Timestamp(),
    created_at: Timestamp(),
  },
  { $id: 'CompanyInvitation' },
);
export type Invitation = Static<typeof Invitation>;

export const CreateInvitationBody = Type.Object(
  {
    email: Type.String({ format: 'email', maxLength: 320 }),
    role: Type.Optional(StringEnum(['admin', 'developer', 'member'] as const, { default: 'member' })),
    message: Type.Optional(Type.String({ maxLength: 2000 })),
  },
  closed,
);

export const AcceptInvitationBody = Type.Object({ token: Type.String({ minLength: 1, maxLength: 200 }) }, closed);

export const AcceptedInvitation = Type.Object({ company: Type.Ref(Company), member: Type.Ref(Member) });

export const CompanyPage = Page(Type.Ref(Company));
export const MemberPage = Page(Type.Ref(Member));
export const InvitationPage = Page(Type.Ref(Invitation));
