import { Type, type Static } from '@sinclair/typebox';
import { IsoDate, Nullable, Page, SkipLimit, StringEnum, Timestamp, Uuid } from '../../http/schemas.js';
import { DEPLOYMENT_STATUSES } from './deployment-state.js';

export const DEPLOYABLE_TYPES = ['agent', 'workflow'] as const;
export const LOG_LEVELS = ['info', 'warning', 'error'] as const;

const channel = Type.String({
  minLength: 1,
  maxLength: 50,
  description: 'for example web, slack, teams; a lowercase word (it is a segment of the agent_key)',
});
const languages = Type.String({
  maxLength: 500,
  description: 'comma-separated language codes, for example "en,ar"; defaults to the agent\'s languages',
});
const config = Type.String({ maxLength: 65_536, description: 'JSON text of an object' });

/** Bodies refuse unknown fields (a 400 naming them): ids, tenancy, status and timestamps are never input. */
const closed = { additionalProperties: false } as const;

export const CreateDeploymentBody = Type.Object(
  {
    deployable_type: StringEnum(DEPLOYABLE_TYPES),
    deployable_id: Uuid(),
    channel,
    region_id: Uuid({ description: 'one of GET /api/public/regions' }),
    languages: Type.Optional(languages),
    config: Type.Optional(config),
  },
  closed,
);
export type CreateDeploymentBody = Static<typeof CreateDeploymentBody>;

export const UpdateDeploymentBody = Type.Object(
  {
    channel: Type.Optional(channel),
    region_id: Type.Optional(Uuid()),
    languages: Type.Optional(languages),
    config: Type.Optional(config),
  },
  closed,
);
export type UpdateDeploymentBody = Static<typeof UpdateDeploymentBody>;

export const Deployment = Type.Object({
  id: Uuid(),
  deployable_type: StringEnum(DEPLOYABLE_TYPES),
  deployable_id: Uuid(),
  agent_id: Uuid(),
  company_id: Uuid(),
  user_id: Nullable(Uuid()),
  channel: Type.String(),
  region_id: Uuid(),
  languages: Type.String(),
  status: StringEnum(DEPLOYMENT_STATUSES),
  config: Type.String(),
  error: Nullable(Type.String()),
  agent_key: Type.String({
    description:
      'the chat agent_key that reaches this deployment: agent:<deployable_id>:<channel>:<region slug> (the agent, or the workflow)',
  }),
  created_at: Timestamp(),
  updated_at: Timestamp(),
});
export type Deployment = Static<typeof Deployment>;

export const DeploymentPage = Page(Deployment);

export const ListDeploymentsQuery = Type.Object({
  deployable_type: Type.Optional(StringEnum(DEPLOYABLE_TYPES)),
  status: Type.Optional(StringEnum(DEPLOYMENT_STATUSES)),
  channel: Type.Optional(Type.String({ minLength: 1, maxLength: 50 })),
  agent_id: Type.Optional(Uuid()),
  ...SkipLimit(20, 100),
});
export type ListDeploymentsQuery = Static<typeof ListDeploymentsQuery>;

export const LogEntry = Type.Object({ timestamp: Timestamp(), level: StringEnum(LOG_LEVELS), message: Type.String() });
export type LogEntry = Static<typeof LogEntry>;

export const LogsQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 1000, default: 100, description: 'Page size (default 100, max 1000).' }),
  since: Type.Optional(IsoDate({ description: 'only entries at or after this time; the oldest of them come first' })),
});
export type LogsQuery = Static<typeof LogsQuery>;

export const LogsResponse = Type.Object({ logs: Type.Array(LogEntry) });

export const DeploymentParams = Type.Object({ deploymentId: Uuid() });
