/**
 * The team-notifications module's service: `notify` for the platform (see
 * team-notifications.notifier.ts) and the read side of the family, every read scoped to the
 * caller's company in SQL. A member reads and moves only their own status; an admin may do it
 * for any member. A user who is not a member of the company is a 404.
 */
import type { Db } from '../../db/database.js';
import type { CompanyContext } from '../../http/caller.js';
import { AppErrors } from '../../http/errors.js';
import { parseIsoDate, type PageOf } from '../../http/schemas.js';
import type { Clock } from '../../lib/clock.js';
import { hasRole } from '../../lib/roles.js';
import { createNotifier } from './team-notifications.notifier.js';
import * as repo from './team-notifications.repo.js';
import type {
  ListParams,
  Notification,
  NotificationStats,
  Recipient,
  StatsParams,
  UserListParams,
} from './team-notifications.schemas.js';
import { NOTIFICATION_CATEGORIES, NOTIFICATION_PRIORITIES, type RecipientStatus } from './team-notifications.tables.js';

export interface TeamNotificationsDeps {
  db: Db;
  clock: Clock;
}

const DAY_MS = 86_400_000;

/** start_date inclusive; end_date inclusive (a bare date covers that day); start after end is a 400. */
function bounds(start: string | undefined, end: string | undefined): { from?: Date; to?: Date } {
  const from = start ? parseIsoDate(start) : undefined;
  const endAt = end ? parseIsoDate(end) : undefined;
  if (from && endAt && from > endAt)
    throw AppErrors.validation(`Invalid query parameter 'start_date': ${start} is after end_date ${end}`);
  const to = endAt && end ? new Date(endAt.getTime() + (/^\d{4}-\d{2}-\d{2}$/.test(end) ? DAY_MS : 1)) : undefined;
  return { ...(from ? { from } : {}), ...(to ? { to } : {}) };
}

function toRecipient(row: repo.RecipientRow): Recipient {
  return {
    id: row.id,
    notification_id: row.notification_id,
    user_id: row.user_id,
    status: row.status,
    read_at: row.read_at?.toISOString() ?? null,
    user: { id: row.user_id, email: row.email, name: row.name ?? row.email },
  };
}

export function toNotification(row: repo.NotificationRow, recipients: Recipient[]): Notification {
  return {
    id: row.id,
    company_id: row.company_id,
    sender_id: row.sender_id,
    notification_type: row.notification_type,
    category: row.category,
    priority: row.priority,
    status: row.status,
    read_at: row.read_at?.toISOString() ?? null,
    title: row.title,
    message: row.message,
    metadata: row.metadata,
    action_url: row.action_url,
    expires_at: row.expires_at?.toISOString() ?? null,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    sender:
      row.sender_id && row.sender_email
        ? { id: row.sender_id, email: row.sender_email, name: row.sender_name ?? row.sender_email }
        : null,
    recipients,
  };
}

export function createTeamNotificationsService(deps: TeamNotificationsDeps) {
  const { db, clock } = deps;
  const notifier = createNotifier(deps);

  async function withRecipients(context: CompanyContext, rows: repo.NotificationRow[]): Promise<Notification[]> {
    const recipients = await repo.recipientsOf(
      db,
      context.companyId,
      rows.map((row) => row.id),
    );
    const byNotification = new Map<string, Recipient[]>();
    for (const row of recipients)
      byNotification.set(row.notification_id, [...(byNotification.get(row.notification_id) ?? []), toRecipient(row)]);
    return rows.map((row) => toNotification(row, byNotification.get(row.id) ?? []));
  }

  /** 404 when the user is not a member of the company; 403 when the caller is someone else and not an admin. */
  async function authorizeUser(context: CompanyContext, userId: string, what: string): Promise<void> {
    if (!(await repo.isMember(db, context.companyId, userId))) throw AppErrors.notFound('User', userId);
    if (userId !== context.userId && !hasRole(context.role, 'admin')) {
      throw AppErrors.forbidden(`${what} of another user needs the admin role; your role is ${context.role}`);
    }
  }

  return {
    ...notifier,

    async list(context: CompanyContext, params: ListParams): Promise<PageOf<Notification>> {
      const filters: repo.NotificationFilters = {
        ...bounds(params.start_date, params.end_date),
        ...(params.notification_type ? { notificationType: params.notification_type } : {}),
        ...(params.agent_id ? { agentId: params.agent_id } : {}),
        ...(params.query_id ? { queryId: params.query_id } : {}),
        ...(params.priority ? { priority: params.priority } : {}),
        ...(params.status ? { status: params.status } : {}),
        ...(params.sender_id ? { senderId: params.sender_id } : {}),
        ...(params.include_expired ? {} : { activeAt: clock.now() }),
      };
      const { rows, total } = await repo.listNotificationRows(
        db,
        context.companyId,
        context.userId,
        false,
        filters,
        params.skip,
        params.limit,
      );
      return { data: await withRecipients(context, rows), total, skip: params.skip, limit: params.limit };
    },

    async get(context: CompanyContext, notificationId: string): Promise<Notification> {
      const row = await repo.findNotificationRow(db, context.companyId, context.userId, notificationId);
      if (!row) throw AppErrors.notFound('Notification', notificationId);
      return (await withRecipients(context, [row]))[0]!;
    },

    async listForUser(context: CompanyContext, userId: string, params: UserListParams): Promise<PageOf<Notification>> {
      await authorizeUser(context, userId, 'Reading the notifications');
      const filters: repo.NotificationFilters = {
        ...(params.status ? { status: params.status } : {}),
        ...(params.notification_type ? { notificationType: params.notification_type } : {}),
        ...(params.priority ? { priority: params.priority } : {}),
        ...(params.include_expired ? {} : { activeAt: clock.now() }),
      };
      const { rows, total } = await repo.listNotificationRows(
        db,
        context.companyId,
        userId,
        true,
        filters,
        params.skip,
        params.limit,
      );
      return { data: await withRecipients(context, rows), total, skip: params.skip, limit: params.limit };
    },

    async setStatus(
      context: CompanyContext,
      notificationId: string,
      userId: string,
      status: RecipientStatus,
    ): Promise<Recipient> {
      if (!(await repo.notificationExists(db, context.companyId, notificationId)))
        throw AppErrors.notFound('Notification', notificationId);
      await authorizeUser(context, userId, 'Changing the status');
      const row = await repo.updateRecipientStatus(db, context.companyId, notificationId, userId, status, clock.now());
      if (!row) throw AppErrors.notFound(`Recipient ${userId} of notification`, notificationId);
      return toRecipient(row);
    },

    async stats(context: CompanyContext, params: StatsParams): Promise<NotificationStats> {
      const userId = params.user_id ?? context.userId;
      if (params.user_id) await authorizeUser(context, params.user_id, 'Reading the statistics');
      const filters: repo.NotificationFilters = {
        ...bounds(params.start_date, params.end_date),
        ...(params.include_expired ? {} : { activeAt: clock.now() }),
      };
      const row = await repo.notificationStats(
        db,
        context.companyId,
        userId,
        params.user_id !== undefined,
        filters,
        NOTIFICATION_CATEGORIES,
        NOTIFICATION_PRIORITIES,
      );
      const of = (prefix: string, keys: readonly string[]) =>
        Object.fromEntries(keys.map((key) => [key, row[`${prefix}:${key}`] ?? 0]));
      return {
        total_notifications: row.total ?? 0,
        unread_count: row['status:unread'] ?? 0,
        read_count: row['status:read'] ?? 0,
        archived_count: row['status:archived'] ?? 0,
        by_type: of('category', NOTIFICATION_CATEGORIES) as NotificationStats['by_type'],
        by_priority: of('priority', NOTIFICATION_PRIORITIES) as NotificationStats['by_priority'],
      };
    },
  };
}

export type TeamNotificationsService = ReturnType<typeof createTeamNotificationsService>;
