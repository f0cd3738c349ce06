/** TypeBox schemas of the team-notifications family (wire names as the interface spec prints them). */
import { Type, type Static } from '@sinclair/typebox';
import { IsoDate, Nullable, Page, SkipLimit, StringEnum, Timestamp, Uuid } from '../../http/schemas.js';
import {
  NOTIFICATION_CATEGORIES,
  NOTIFICATION_PRIORITIES,
  NOTIFICATION_TYPES,
  RECIPIENT_STATUSES,
} from './team-notifications.tables.js';

const Person = Type.Object({ id: Uuid(), email: Type.String(), name: Type.String() });

export const Recipient = Type.Object({
  id: Uuid(),
  notification_id: Uuid(),
  user_id: Uuid(),
  status: StringEnum(RECIPIENT_STATUSES),
  read_at: Nullable(Timestamp()),
  user: Person,
});
export type Recipient = Static<typeof Recipient>;

export const Notification = Type.Object(
  {
    id: Uuid(),
    company_id: Uuid(),
    sender_id: Nullable(Uuid({ description: 'null when an agent or the platform sent it' })),
    notification_type: StringEnum(NOTIFICATION_TYPES),
    category: StringEnum(NOTIFICATION_CATEGORIES, { description: 'what stats count in by_type' }),
    priority: StringEnum(NOTIFICATION_PRIORITIES),
    status: StringEnum(RECIPIENT_STATUSES, {
      description:
        "the read status of the user whose view this is (the caller's, or the user of /users/{user_id}); unread when not a recipient",
    }),
    read_at: Nullable(Timestamp({ description: 'when that user read it' })),
    title: Type.String(),
    message: Type.String(),
    metadata: Type.Record(Type.String(), Type.String(), {
      description: 'agent_id, query_id, action_type, recipient_email, email_subject, tool_used, execution_time …',
    }),
    action_url: Nullable(Type.String()),
    expires_at: Nullable(Timestamp()),
    created_at: Timestamp(),
    updated_at: Timestamp(),
    sender: Nullable(Person),
    recipients: Type.Array(Recipient),
  },
  { title: 'TeamNotification' },
);
export type Notification = Static<typeof Notification>;
export const NotificationPage = Page(Notification);

const includeExpired = Type.Boolean({
  default: false,
  description: 'include notifications whose expires_at has passed',
});
const bounds = {
  start_date: Type.Optional(IsoDate({ description: 'ISO 8601; created at or after' })),
  end_date: Type.Optional(IsoDate({ description: 'ISO 8601; created at or before (a bare date covers that day)' })),
};

export const ListParams = Type.Object({
  ...SkipLimit(50, 100),
  notification_type: Type.Optional(StringEnum(NOTIFICATION_TYPES)),
  agent_id: Type.Optional(Uuid()),
  query_id: Type.Optional(Uuid()),
  priority: Type.Optional(StringEnum(NOTIFICATION_PRIORITIES)),
  status: Type.Optional(StringEnum(RECIPIENT_STATUSES)),
  sender_id: Type.Optional(Uuid()),
  ...bounds,
  include_expired: includeExpired,
});
export type ListParams = Static<typeof ListParams>;

export const UserListParams = Type.Object({
  ...SkipLimit(50, 100),
  status: Type.Optional(StringEnum(RECIPIENT_STATUSES)),
  notification_type: Type.Optional(StringEnum(NOTIFICATION_TYPES)),
  priority: Type.Optional(StringEnum(NOTIFICATION_PRIORITIES)),
  include_expired: includeExpired,
});
export type UserListParams = Static<typeof UserListParams>;

export const StatsParams = Type.Object({ ...bounds, user_id: Type.Optional(Uuid()), include_expired: includeExpired });
export type StatsParams = Static<typeof StatsParams>;

export const StatusBody = Type.Object({ status: StringEnum(RECIPIENT_STATUSES) }, { additionalProperties: false });

const counts = (keys: readonly string[]) => Type.Object(Object.fromEntries(keys.map((key) => [key, Type.Integer()])));
export const NotificationStats = Type.Object({
  total_notifications: Type.Integer(),
  unread_count: Type.Integer(),
  read_count: Type.Integer(),
  archived_count: Type.Integer(),
  by_type: counts(NOTIFICATION_CATEGORIES),
  by_priority: counts(NOTIFICATION_PRIORITIES),
});
export type NotificationStats = Static<typeof NotificationStats>;
