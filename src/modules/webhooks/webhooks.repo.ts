/** SQL of the webhooks module: endpoints, the outbox, deliveries and their attempts. Kysely only. */
import { sql, type Insertable, type Selectable, type Updateable } from 'kysely';
import type { Executor } from '../../db/database.js';
import type { DeliveryStatus, WebhookEndpointsTable } from './webhooks.tables.js';

export type EndpointRow = Selectable<WebhookEndpointsTable>;

const ENDPOINT_COLUMNS = [
  'id',
  'company_id',
  'url',
  'description',
  'events',
  'enabled',
  'disabled_reason',
  'secret',
  'previous_secret',
  'previous_secret_expires_at',
  'last_success_at',
  'created_by',
  'created_at',
  'updated_at',
] as const;

export async function insertEndpoint(db: Executor, row: Insertable<WebhookEndpointsTable>): Promise<EndpointRow> {
  return db.insertInto('webhook_endpoints').values(row).returning(ENDPOINT_COLUMNS).executeTakeFirstOrThrow();
}

export async function countEndpoints(db: Executor, companyId: string): Promise<number> {
  const row = await db
    .selectFrom('webhook_endpoints')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('company_id', '=', companyId)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

export async function listEndpoints(db: Executor, companyId: string): Promise<EndpointRow[]> {
  return db
    .selectFrom('webhook_endpoints')
    .select(ENDPOINT_COLUMNS)
    .where('company_id', '=', companyId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .execute();
}

export async function findEndpoint(db: Executor, companyId: string, id: string, lock = false) {
  const query = db
    .selectFrom('webhook_endpoints')
    .select(ENDPOINT_COLUMNS)
    .where('company_id', '=', companyId)
    .where('id', '=', id);
  return (lock ? query.forUpdate() : query).executeTakeFirst();
}

export async function updateEndpoint(
  db: Executor,
  companyId: string,
  id: string,
  patch: Updateable<WebhookEndpointsTable>,
): Promise<EndpointRow | undefined> {
  return db
    .updateTable('webhook_endpoints')
    .set(patch)
    .where('company_id', '=', companyId)
    .where('id', '=', id)
    .returning(ENDPOINT_COLUMNS)
    .executeTakeFirst();
}

export async function deleteEndpoint(db: Executor, companyId: string, id: string): Promise<boolean> {
  const result = await db
    .deleteFrom('webhook_endpoints')
    .where('company_id', '=', companyId)
    .where('id', '=', id)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

const DELIVERY_COLUMNS = ['id', 'event_id', 'event_type', 'status', 'next_attempt_at', 'created_at'] as const;

export async function listDeliveries(
  db: Executor,
  companyId: string,
  endpointId: string,
  filter: { status?: DeliveryStatus; skip: number; limit: number },
) {
  let base = db
    .selectFrom('webhook_deliveries')
    .where('company_id', '=', companyId)
    .where('endpoint_id', '=', endpointId);
  if (filter.status) base = base.where('status', '=', filter.status);
  const [rows, total] = await Promise.all([
    base
      .select(DELIVERY_COLUMNS)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .offset(filter.skip)
      .limit(filter.limit)
      .execute(),
    base.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(total.total) };
}

export async function findDelivery(db: Executor, companyId: string, endpointId: string, id: string) {
  return db
    .selectFrom('webhook_deliveries')
    .select(DELIVERY_COLUMNS)
    .where('company_id', '=', companyId)
    .where('endpoint_id', '=', endpointId)
    .where('id', '=', id)
    .executeTakeFirst();
}

export async function attemptsOf(db: Executor, deliveryIds: string[]) {
  if (deliveryIds.length === 0) return [];
  return db
    .selectFrom('webhook_attempts')
    .select(['delivery_id', 'at', 'response_status', 'latency_ms', 'error'])
    .where('delivery_id', 'in', deliveryIds)
    .orderBy('delivery_id')
    .orderBy('id')
    .execute();
}

/**
 * Makes a delivery due now, keeping its id (a manual retry): a finished one gets one more attempt;
 * a pending one keeps its schedule and is tried at once (one being sent keeps its lease).
 */
export async function requeueDelivery(db: Executor, id: string, now: Date) {
  await db
    .updateTable('webhook_deliveries')
    .set({
      single_attempt: sql<boolean>`case when status = 'pending' then single_attempt else true end`,
      status: 'pending',
      next_attempt_at: now,
      updated_at: now,
    })
    .where('id', '=', id)
    .execute();
  await sql`select pg_notify('switchboard_webhook_events', '')`.execute(db);
}

/** An event written directly (a test message): already rendered and dispatched. */
export async function insertDispatchedEvent(
  db: Executor,
  row: { company_id: string; type: string; resource_id: string; occurred_at: Date; payload: string },
) {
  return db
    .insertInto('webhook_events')
    .values({ ...row, dispatched_at: row.occurred_at })
    .returning(['id'])
    .executeTakeFirstOrThrow();
}

export async function insertDelivery(
  db: Executor,
  row: {
    company_id: string;
    endpoint_id: string;
    event_id: string;
    event_type: string;
    next_attempt_at: Date;
    single_attempt: boolean;
  },
) {
  return db.insertInto('webhook_deliveries').values(row).returning(DELIVERY_COLUMNS).executeTakeFirstOrThrow();
}

// ---- the outbox and the sender (webhooks.dispatcher.ts) ----

/** Up to `limit` events not yet fanned out, oldest first, locked (others skip them). */
export async function lockUndispatchedEvents(db: Executor, limit: number) {
  return db
    .selectFrom('webhook_events')
    .select(['id', 'company_id', 'type', 'resource_id', 'occurred_at'])
    .where('dispatched_at', 'is', null)
    .orderBy('occurred_at')
    .limit(limit)
    .forUpdate()
    .skipLocked()
    .execute();
}

export async function markDispatched(db: Executor, id: string, payload: string, now: Date) {
  await db.updateTable('webhook_events').set({ payload, dispatched_at: now }).where('id', '=', id).execute();
}

/** One delivery per enabled endpoint of the event's company subscribed to its type. */
export async function fanOut(db: Executor, event: { id: string; company_id: string; type: string }, now: Date) {
  await db
    .insertInto('webhook_deliveries')
    .columns(['company_id', 'endpoint_id', 'event_id', 'event_type', 'next_attempt_at'])
    .expression((eb) =>
      eb
        .selectFrom('webhook_endpoints as e')
        .select([
          'e.company_id',
          'e.id',
          sql<string>`${event.id}::uuid`.as('event_id'),
          sql<string>`${event.type}`.as('event_type'),
          sql<Date>`${now}::timestamptz`.as('next_attempt_at'),
        ])
        .where('e.company_id', '=', event.company_id)
        .where('e.enabled', '=', true)
        .where(sql<boolean>`${event.type} = any (e.events)`),
    )
    .execute();
}

export interface ClaimedDelivery {
  id: string;
  endpoint_id: string;
  company_id: string;
  event_type: string;
  attempt_count: number;
  single_attempt: boolean;
  created_at: Date;
}

/**
 * Leases due deliveries to `token` until `leaseSeconds` from now: at most `limit` in all, and per
 * endpoint no more than `perEndpoint` leased at once (counting leases other workers hold). The
 * endpoints are locked while their deliveries are counted and leased, so two workers never
 * exceed an endpoint's limit together; an endpoint another worker is leasing from is skipped.
 */
export async function leaseDue(
  db: Executor,
  options: { token: string; leaseSeconds: number; perEndpoint: number; limit: number },
): Promise<ClaimedDelivery[]> {
  const { rows } = await sql<ClaimedDelivery>`
    with due_endpoints as (
      select distinct endpoint_id from (
        select endpoint_id from webhook_deliveries
        where status = 'pending' and next_attempt_at <= now() and (locked_until is null or locked_until < now())
        order by next_attempt_at
        limit 1000
      ) d
    ),
    locked as (
      select e.id from webhook_endpoints e join due_endpoints d on d.endpoint_id = e.id
      where e.enabled
      for update of e skip locked
    ),
    busy as (
      select endpoint_id, count(*)::int as n from webhook_deliveries
      where status = 'pending' and locked_until >= now() and endpoint_id in (select id from locked)
      group by endpoint_id
    ),
    ranked as (
      select d.id, d.endpoint_id, d.next_attempt_at,
             row_number() over (partition by d.endpoint_id order by d.next_attempt_at, d.id) as rank
      from webhook_deliveries d
      where d.endpoint_id in (select id from locked) and d.status = 'pending'
        and d.next_attempt_at <= now() and (d.locked_until is null or d.locked_until < now())
    ),
    chosen as (
      select r.id from ranked r left join busy b on b.endpoint_id = r.endpoint_id
      where r.rank <= ${options.perEndpoint} - coalesce(b.n, 0)
      order by r.rank, r.next_attempt_at
      limit ${options.limit}
    )
    update webhook_deliveries d
    set locked_until = now() + make_interval(secs => ${options.leaseSeconds}), lock_token = ${options.token}::uuid
    from chosen c where d.id = c.id
    returning d.id, d.endpoint_id, d.company_id, d.event_type, d.attempt_count, d.single_attempt, d.created_at
  `.execute(db);
  return rows;
}

/** What sending a leased delivery needs: the endpoint's address and sealed secrets, the body. */
export async function sendingContext(db: Executor, deliveryIds: string[]) {
  if (deliveryIds.length === 0) return [];
  return db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_endpoints as e', 'e.id', 'd.endpoint_id')
    .innerJoin('webhook_events as v', 'v.id', 'd.event_id')
    .select([
      'd.id',
      'e.id as endpoint_id',
      'e.company_id',
      'e.url',
      'e.secret',
      'e.previous_secret',
      'e.previous_secret_expires_at',
      'v.payload',
    ])
    .where('d.id', 'in', deliveryIds)
    .execute();
}

/** Records an attempt's outcome on a delivery still leased to `token`; false when the lease was lost. */
export async function finishAttempt(
  db: Executor,
  delivery: { id: string; token: string },
  outcome: { status: DeliveryStatus; nextAttemptAt: Date | null; now: Date },
): Promise<boolean> {
  const result = await db
    .updateTable('webhook_deliveries')
    .set((eb) => ({
      status: outcome.status,
      next_attempt_at: outcome.nextAttemptAt,
      attempt_count: eb('attempt_count', '+', 1),
      locked_until: null,
      lock_token: null,
      updated_at: outcome.now,
    }))
    .where('id', '=', delivery.id)
    .where('lock_token', '=', delivery.token)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export async function insertAttempt(
  db: Executor,
  row: { delivery_id: string; at: Date; response_status: number | null; latency_ms: number; error: string | null },
) {
  await db.insertInto('webhook_attempts').values(row).execute();
}

export async function markEndpointSuccess(db: Executor, endpointId: string, now: Date) {
  await db.updateTable('webhook_endpoints').set({ last_success_at: now }).where('id', '=', endpointId).execute();
}

/**
 * Disables the endpoint when it has not succeeded since `since` (the failed delivery's first
 * attempt) and is still enabled; the disabled row, or undefined when nothing changed.
 */
export async function disableIfFailing(db: Executor, endpointId: string, since: Date, reason: string, now: Date) {
  return db
    .updateTable('webhook_endpoints')
    .set({ enabled: false, disabled_reason: reason, updated_at: now })
    .where('id', '=', endpointId)
    .where('enabled', '=', true)
    .where((eb) => eb.or([eb('last_success_at', 'is', null), eb('last_success_at', '<', since)]))
    .returning(['id', 'company_id', 'url'])
    .executeTakeFirst();
}

/** Hands back the leases of a worker that stops (the deliveries are due again at once). */
export async function releaseLeases(db: Executor, token: string) {
  await db
    .updateTable('webhook_deliveries')
    .set({ locked_until: null, lock_token: null })
    .where('lock_token', '=', token)
    .where('status', '=', 'pending')
    .execute();
}

/** Deletes events (with their deliveries and attempts) older than `before` with nothing pending; how many. */
export async function deleteExpired(db: Executor, before: Date, limit: number): Promise<number> {
  const result = await sql`
    delete from webhook_events v where v.id in (
      select e.id from webhook_events e
      where e.occurred_at < ${before} and e.dispatched_at is not null
        and not exists (select 1 from webhook_deliveries d where d.event_id = e.id and d.status = 'pending')
      order by e.occurred_at limit ${limit}
    )
  `.execute(db);
  return Number(result.numAffectedRows ?? 0);
}
