/**
 * SQL of team notifications and their recipient rows. Executor first; every query is scoped
 * to the company in SQL.
 */
import { sql, type Insertable } from 'kysely';
import type { Executor } from '../../db/database.js';
import type { NotificationsTable } from './team-notifications.tables.js';

/** Inserts the notification and one unread recipient row per current member of its company. */
export async function insertNotification(db: Executor, row: Insertable<NotificationsTable>): Promise<{ id: string }> {
  const notification = await db
    .insertInto('notifications')
    .values(row)
    .returning(['id', 'created_at'])
    .executeTakeFirstOrThrow();
  await db
    .insertInto('notification_recipients')
    .columns(['notification_id', 'company_id', 'user_id', 'created_at', 'updated_at'])
    .expression((eb) =>
      eb
        .selectFrom('company_members')
        .select((s) => [
          s.val(notification.id).as('notification_id'),
          'company_id',
          'user_id',
          s.val(notification.created_at).as('created_at'),
          s.val(notification.created_at).as('updated_at'),
        ])
        .where('company_id', '=', row.company_id),
    )
    .execute();
  return { id: notification.id };
}

export interface NotificationFilters {
  notificationType?: string;
  agentId?: string;
  queryId?: string;
  priority?: string;
  status?: string;
  senderId?: string;
  from?: Date;
  to?: Date;
  /** Leave out notifications expired at this instant. */
  activeAt?: Date;
}

/**
 * Notifications of the company as seen by `viewerId`: with `deliveredOnly`, only those delivered
 * to the viewer; otherwise all, with the viewer's status where they are a recipient (else unread).
 */
function viewOf(
  db: Executor,
  companyId: string,
  viewerId: string,
  deliveredOnly: boolean,
  filters: NotificationFilters,
) {
  const joined = deliveredOnly
    ? db
        .selectFrom('notifications as n')
        .innerJoin('notification_recipients as r', (join) =>
          join.onRef('r.notification_id', '=', 'n.id').on('r.user_id', '=', viewerId),
        )
    : db
        .selectFrom('notifications as n')
        .leftJoin('notification_recipients as r', (join) =>
          join.onRef('r.notification_id', '=', 'n.id').on('r.user_id', '=', viewerId),
        );
  let q = joined.where('n.company_id', '=', companyId);
  if (filters.notificationType) q = q.where('n.notification_type', '=', filters.notificationType as never);
  if (filters.priority) q = q.where('n.priority', '=', filters.priority as never);
  if (filters.senderId) q = q.where('n.sender_id', '=', filters.senderId);
  if (filters.agentId)
    q = q.where(sql`n.metadata ->> 'agent_id'`, '=', filters.agentId).where(sql<boolean>`n.metadata ? 'agent_id'`);
  if (filters.queryId)
    q = q.where(sql`n.metadata ->> 'query_id'`, '=', filters.queryId).where(sql<boolean>`n.metadata ? 'query_id'`);
  if (filters.status) q = q.where(sql`coalesce(r.status, 'unread')`, '=', filters.status);
  if (filters.from) q = q.where('n.created_at', '>=', filters.from);
  if (filters.to) q = q.where('n.created_at', '<', filters.to);
  if (filters.activeAt) {
    const at = filters.activeAt;
    q = q.where((eb) => eb.or([eb('n.expires_at', 'is', null), eb('n.expires_at', '>', at)]));
  }
  return q;
}

/** A notification row as its viewer sees it: the viewer's status and the sender's name. */
function withViewColumns(view: ReturnType<typeof viewOf>) {
  return view
    .leftJoin('users as s', 's.id', 'n.sender_id')
    .selectAll('n')
    .select([
      sql<'unread' | 'read' | 'archived'>`coalesce(r.status, 'unread')`.as('status'),
      'r.read_at',
      's.email as sender_email',
      sql<string | null>`nullif(trim(s.first_name || ' ' || s.last_name), '')`.as('sender_name'),
    ]);
}

export async function listNotificationRows(
  db: Executor,
  companyId: string,
  viewerId: string,
  deliveredOnly: boolean,
  filters: NotificationFilters,
  skip: number,
  limit: number,
) {
  const base = viewOf(db, companyId, viewerId, deliveredOnly, filters);
  const [rows, count] = await Promise.all([
    withViewColumns(base).orderBy('n.created_at', 'desc').orderBy('n.id', 'desc').offset(skip).limit(limit).execute(),
    base.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: count.total };
}
export type NotificationRow = Awaited<ReturnType<typeof listNotificationRows>>['rows'][number];

/** One notification of the company as seen by the viewer. */
export async function findNotificationRow(db: Executor, companyId: string, viewerId: string, notificationId: string) {
  return withViewColumns(viewOf(db, companyId, viewerId, false, {}))
    .where('n.id', '=', notificationId)
    .executeTakeFirst();
}

const RECIPIENT_COLUMNS = [
  'r.id',
  'r.notification_id',
  'r.user_id',
  'r.status',
  'r.read_at',
  'u.email',
  sql<string | null>`nullif(trim(u.first_name || ' ' || u.last_name), '')`.as('name'),
] as const;

/** Every recipient of these notifications, in a stable order. */
export async function recipientsOf(db: Executor, companyId: string, notificationIds: string[]) {
  if (notificationIds.length === 0) return [];
  return db
    .selectFrom('notification_recipients as r')
    .innerJoin('users as u', 'u.id', 'r.user_id')
    .select(RECIPIENT_COLUMNS)
    .where('r.company_id', '=', companyId)
    .where('r.notification_id', 'in', notificationIds)
    .orderBy('r.notification_id')
    .orderBy('u.email')
    .execute();
}
export type RecipientRow = Awaited<ReturnType<typeof recipientsOf>>[number];

/** Moves one user's status; undefined when that user is not a recipient of that notification of the company. */
export async function updateRecipientStatus(
  db: Executor,
  companyId: string,
  notificationId: string,
  userId: string,
  status: 'unread' | 'read' | 'archived',
  now: Date,
) {
  const updated = await db
    .updateTable('notification_recipients')
    .set({
      status,
      read_at: status === 'read' ? sql`coalesce(read_at, ${now})` : status === 'unread' ? null : sql`read_at`,
      updated_at: now,
    })
    .where('company_id', '=', companyId)
    .where('notification_id', '=', notificationId)
    .where('user_id', '=', userId)
    .returning(['id'])
    .executeTakeFirst();
  if (!updated) return undefined;
  return db
    .selectFrom('notification_recipients as r')
    .innerJoin('users as u', 'u.id', 'r.user_id')
    .select(RECIPIENT_COLUMNS)
    .where('r.id', '=', updated.id)
    .executeTakeFirstOrThrow();
}

export async function notificationExists(db: Executor, companyId: string, notificationId: string): Promise<boolean> {
  const row = await db
    .selectFrom('notifications')
    .select('id')
    .where('company_id', '=', companyId)
    .where('id', '=', notificationId)
    .executeTakeFirst();
  return row !== undefined;
}

export async function isMember(db: Executor, companyId: string, userId: string): Promise<boolean> {
  const row = await db
    .selectFrom('company_members')
    .select('id')
    .where('company_id', '=', companyId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return row !== undefined;
}

export type StatsRow = Record<string, number>;

/** Counts over the viewer's view: totals, the viewer's statuses, categories and priorities. */
export async function notificationStats(
  db: Executor,
  companyId: string,
  viewerId: string,
  deliveredOnly: boolean,
  filters: NotificationFilters,
  categories: readonly string[],
  priorities: readonly string[],
) {
  const countWhere = (expression: ReturnType<typeof sql>, value: string, alias: string) =>
    sql<number>`count(*) filter (where ${expression} = ${sql.lit(value)})`.as(alias);
  return viewOf(db, companyId, viewerId, deliveredOnly, filters)
    .select((eb) => [
      eb.fn.countAll<number>().as('total'),
      ...['unread', 'read', 'archived'].map((status) =>
        countWhere(sql`coalesce(r.status, 'unread')`, status, `status:${status}`),
      ),
      ...categories.map((category) => countWhere(sql`n.category`, category, `category:${category}`)),
      ...priorities.map((priority) => countWhere(sql`n.priority`, priority, `priority:${priority}`)),
    ])
    .executeTakeFirstOrThrow() as Promise<StatsRow>;
}
