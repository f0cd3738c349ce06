import { Type, type Static } from '@sinclair/typebox';
import { Nullable, StringEnum, Timestamp, Uuid } from '../../http/schemas.js';

/** Bodies refuse unknown fields (a 400 naming them): ids, tenancy and timestamps are never input. */
const closed = { additionalProperties: false } as const;

export const VISIBILITIES = ['private', 'public'] as const;

/** `config` on the wire: an object whose keys the integration's kind defines (checked by the registry). */
const ConfigObject = Type.Object(
  {},
  {
    additionalProperties: true,
    maxProperties: 50,
    description:
      "Kind-specific keys (see the module README). Secret keys are stored encrypted and shown as '••••' plus their last four characters (short ones as '••••'); custom_api `headers` values are secrets too (declare non-secret headers in `plain_headers`). A URL carrying credentials (user:password@) anywhere in a config is refused with 400.",
  },
);

const Name = Type.String({ minLength: 1, maxLength: 200 });
const TypeName = Type.String({
  minLength: 1,
  maxLength: 50,
  description: 'One of the types of GET /integrations/types (or whatsapp, odoo).',
});

export const CreateIntegrationBody = Type.Object(
  {
    name: Name,
    type: TypeName,
    config: Type.Optional(ConfigObject),
    is_active: Type.Optional(Type.Boolean({ default: true })),
    visibility: Type.Optional(StringEnum(VISIBILITIES, { default: 'private' })),
    agent_id: Type.Optional(Nullable(Uuid({ description: 'An agent of your company this integration is linked to.' }))),
  },
  closed,
);
export type CreateIntegrationBody = Static<typeof CreateIntegrationBody>;

export const UpdateIntegrationBody = Type.Object(
  {
    name: Type.Optional(Name),
    type: Type.Optional(TypeName),
    config: Type.Optional(
      Type.Object(
        {},
        {
          additionalProperties: true,
          maxProperties: 50,
          description:
            'Keys sent replace the stored ones, keys not sent are kept, a key sent as null is removed. A secret sent back masked (or omitted) keeps its stored value.',
        },
      ),
    ),
    is_active: Type.Optional(Type.Boolean()),
    visibility: Type.Optional(StringEnum(VISIBILITIES)),
    agent_id: Type.Optional(Nullable(Uuid())),
  },
  { ...closed, minProperties: 1 },
);
export type UpdateIntegrationBody = Static<typeof UpdateIntegrationBody>;

export const Integration = Type.Object(
  {
    id: Uuid(),
    name: Type.String(),
    type: Type.String(),
    config: Type.Object({}, { additionalProperties: true }),
    is_active: Type.Boolean(),
    visibility: StringEnum(VISIBILITIES),
    company_id: Uuid(),
    agent_id: Nullable(Uuid()),
    created_at: Timestamp(),
    updated_at: Timestamp(),
  },
  { $id: 'Integration' },
);
export type Integration = Static<typeof Integration>;

export const IntegrationType = Type.Object(
  { type: Type.String(), name: Type.String(), description: Type.String() },
  { $id: 'IntegrationType' },
);
export type IntegrationType = Static<typeof IntegrationType>;

export const IntegrationTestResult = Type.Object({
  ok: Type.Boolean(),
  detail: Type.String({ description: "What the live check found, or why it failed (the vendor's words)." }),
  latency_ms: Type.Integer({ description: 'Time the check took, in milliseconds.' }),
});
export type IntegrationTestResult = Static<typeof IntegrationTestResult>;
