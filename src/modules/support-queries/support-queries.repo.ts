/**
 * SQL of the support records the platform writes: end users, support queries and notes.
 * Every function takes the executor first (the caller's transaction when there is one).
 */
import { sql, type Insertable, type Updateable } from 'kysely';
import type { Executor } from '../../db/database.js';
import type { Priority, QueryType, SupportNotesTable, SupportQueriesTable } from './support-queries.tables.js';

/** The end user with this external id in the company, created or updated (email and name when given). */
export async function upsertEndUser(
  db: Executor,
  companyId: string,
  externalId: string,
  fields: { email?: string | null; name?: string | null },
) {
  return db
    .insertInto('end_users')
    .values({
      company_id: companyId,
      external_id: externalId,
      email: fields.email ?? null,
      name: fields.name ?? externalId,
    })
    .onConflict((oc) =>
      oc.columns(['company_id', 'external_id']).doUpdateSet((eb) => ({
        email: fields.email != null ? eb.ref('excluded.email') : eb.ref('end_users.email'),
        name: fields.name != null ? eb.ref('excluded.name') : eb.ref('end_users.name'),
        updated_at:
          fields.email != null || fields.name != null ? eb.ref('excluded.updated_at') : eb.ref('end_users.updated_at'),
      })),
    )
    .returning(['id'])
    .executeTakeFirstOrThrow();
}

export type NewSupportQuery = Insertable<SupportQueriesTable>;

/**
 * Inserts a support query; with a conversation id that already has one, returns that one
 * (one query per conversation).
 */
export async function insertSupportQuery(
  db: Executor,
  row: NewSupportQuery,
): Promise<{ id: string; created: boolean }> {
  const inserted = await db
    .insertInto('support_queries')
    .values(row)
    .onConflict((oc) => oc.column('conversation_id').where('conversation_id', 'is not', null).doNothing())
    .returning(['id'])
    .executeTakeFirst();
  if (inserted) return { id: inserted.id, created: true };
  const existing = await db
    .selectFrom('support_queries')
    .select('id')
    .where('company_id', '=', row.company_id)
    .where('conversation_id', '=', row.conversation_id ?? null)
    .executeTakeFirstOrThrow();
  return { id: existing.id, created: false };
}

/** The query row, locked for the rest of the transaction. */
export async function lockSupportQuery(db: Executor, companyId: string, queryId: string) {
  return db
    .selectFrom('support_queries')
    .select([
      'id',
      'status',
      'created_at',
      'resolved_at',
      'escalated_to_human',
      'tools_used',
      'agent_actions_count',
      'resolution_method',
    ])
    .where('company_id', '=', companyId)
    .where('id', '=', queryId)
    .forUpdate()
    .executeTakeFirst();
}

export async function updateSupportQuery(
  db: Executor,
  companyId: string,
  queryId: string,
  patch: Updateable<SupportQueriesTable>,
) {
  await db
    .updateTable('support_queries')
    .set(patch)
    .where('company_id', '=', companyId)
    .where('id', '=', queryId)
    .execute();
}

export async function insertSupportNote(db: Executor, row: Insertable<SupportNotesTable>) {
  return db.insertInto('support_notes').values(row).returning(['id']).executeTakeFirstOrThrow();
}

export interface SyntheticQueries {
  companyId: string;
  agentIds: string[];
  endUserIds: string[];
  count: number;
  from: Date;
  to: Date;
  subjects: Record<QueryType, string[]>;
  tools: string[];
}

/**
 * Bulk history for benchmarks and large demos: `count` queries in one statement, with the
 * distributions of the demo replay (more recent days busier; 15 % escalated; resolution times
 * log-uniform from 2 minutes to 13 hours; 60 % of resolved queries rated, mostly 4–5 and lower when slow or escalated; half of
 * the resolved ones closed a day later; queries still in flight at `to` open or in progress).
 */
export async function insertSyntheticQueries(db: Executor, spec: SyntheticQueries): Promise<void> {
  const types = Object.keys(spec.subjects) as QueryType[];
  const subjects = types.map((type) => spec.subjects[type]);
  const width = Math.max(...subjects.map((list) => list.length));
  // A rectangular text[][] of subjects per type (shorter lists repeat their first entry).
  const grid = subjects.map((list) => Array.from({ length: width }, (_, i) => list[i] ?? list[0]!));
  await sql`
    with p as (
      select ${spec.agentIds}::uuid[] as agents, ${spec.endUserIds}::uuid[] as users, ${types}::text[] as types,
             ${grid}::text[][] as subjects, ${spec.tools}::text[] as tools,
             ${spec.from}::timestamptz as t0, extract(epoch from (${spec.to}::timestamptz - ${spec.from}::timestamptz)) as span,
             ${spec.to}::timestamptz as t1),
    r as (
      select g, random() as a, random() as b, random() as c, random() as d, random() as e, random() as f, random() as h, random() as k
      from generate_series(1, ${spec.count}::int) as g),
    s as (
      select r.*, p.*,
        1 + floor(r.c * 100)::int as tpct,
        p.t0 + make_interval(secs => p.span * sqrt(r.d)) as created,
        exp(ln(2) + r.f * ln(400)) as minutes,
        r.e < 0.15 as escalated
      from r cross join p),
    t as (
      select s.*,
        case when tpct <= 28 then 1 when tpct <= 52 then 2 when tpct <= 68 then 3 when tpct <= 80 then 4 when tpct <= 92 then 5 else 6 end as ti,
        case when created + make_interval(secs => minutes * 60) <= t1 and k >= 0.05 then created + make_interval(secs => minutes * 60) end as resolved
      from s)
    insert into support_queries (company_id, user_id, agent_id, conversation_id, query_type, status, priority, subject, description,
      resolution, agent_actions_count, tools_used, customer_satisfaction, resolution_method, escalated_to_human,
      created_at, updated_at, resolved_at, closed_at)
    select ${spec.companyId}::uuid,
      users[1 + floor(a * array_length(users, 1))::int],
      agents[1 + floor(b * array_length(agents, 1))::int],
      gen_random_uuid(),
      types[least(ti, array_length(types, 1))],
      case when resolved is null and created < t1 - interval '3 days' then 'closed'
           when resolved is null and h < 0.2 then 'open'
           when resolved is null then 'in_progress'
           when h < 0.5 and resolved + interval '1 day' <= t1 then 'closed'
           else 'resolved' end,
      case when h < 0.2 then 'low' when h < 0.7 then 'medium' when h < 0.93 then 'high' else 'urgent' end,
      subjects[least(ti, array_length(types, 1))][1 + floor(k * ${width})::int],
      subjects[least(ti, array_length(types, 1))][1 + floor(k * ${width})::int] || '. I tried the help centre first but could not find an answer.',
      case when resolved is null then '' when escalated then 'Resolved by the support team.' else 'Answered from the knowledge base.' end,
      1 + floor(c * 6)::int,
      case when a < 0.5 then array[tools[1 + floor(f * array_length(tools, 1))::int]] when a < 0.7 then array[tools[1], tools[1 + floor(h * array_length(tools, 1))::int]] else '{}' end,
      case when resolved is not null and b < 0.6 then greatest(1, 5 - round(4 * power(f, 3))::int - case when escalated then 1 else 0 end)::smallint end,
      case when resolved is null then null when escalated then 'human' else 'automated' end,
      escalated,
      created,
      coalesce(resolved, created),
      resolved,
      case when resolved is null and created < t1 - interval '3 days' then created + interval '3 days'
           when resolved is not null and h < 0.5 and resolved + interval '1 day' <= t1 then resolved + interval '1 day' end
    from t`.execute(db);
}

/**
 * After a bulk load: folds its rollup contributions, then refreshes planner statistics (and the
 * visibility map that index-only scans need).
 */
export async function analyzeSupportTables(db: Executor): Promise<void> {
  await foldAllRollups(db);
  // The fold deleted every pending row: without a vacuum, readers' scans of the (now empty)
  // pending table would walk the dead rows until autovacuum comes.
  await sql`vacuum analyze support_rollup_pending`.execute(db);
  await sql`analyze support_query_hourly, support_query_daily, support_resolution_daily`.execute(db);
  await sql`vacuum analyze support_queries`.execute(db);
  await sql`analyze support_agent_metrics`.execute(db);
}

/**
 * Folds up to `maxRows` pending rollup contributions into the rollups (migration 0090); returns
 * how many it folded (0 when none are pending or another fold holds the lock).
 */
export async function foldRollups(db: Executor, maxRows: number): Promise<number> {
  const result = await sql<{ folded: number }>`select support_rollup_fold(${maxRows}::int) as folded`.execute(db);
  return result.rows[0]!.folded;
}

/** Folds every pending contribution, waiting out a concurrent fold (after a bulk load). */
export async function foldAllRollups(db: Executor, batch = 200_000): Promise<number> {
  let total = 0;
  for (;;) {
    const folded = await foldRollups(db, batch);
    total += folded;
    if (folded > 0) continue;
    const pending = await db.selectFrom('support_rollup_pending').select('id').limit(1).executeTakeFirst();
    if (!pending) return total;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** What one agent turn writes to its conversation's support query (see `turnRecordCtes`). */
export interface TurnRecordValues {
  companyId: string;
  agentId: string;
  /** A new query's classification, subject and description (used only when one is opened). */
  queryType: QueryType;
  priority: Priority;
  subject: string;
  description: string;
  now: Date;
  /** The agent's turn (a finished turn); null: the query is opened (if new) but not moved. */
  turn: {
    resolved: boolean;
    escalated: boolean;
    resolution: string | null;
    toolsUsed: string[];
    actions: number;
  } | null;
}

/**
 * The values of `turnRecordCtes` (the statement's parameters), worked out from the turn: the
 * statement's text depends only on whether there is a turn (`moves`).
 */
export function turnRecordParams(v: TurnRecordValues) {
  const turn = v.turn;
  const resolved = turn?.resolved ?? false;
  const escalated = turn?.escalated ?? false;
  return {
    companyId: v.companyId,
    agentId: v.agentId,
    queryType: v.queryType,
    priority: v.priority,
    subject: v.subject,
    description: v.description,
    now: v.now,
    resolved,
    escalated,
    tools: turn ? [...new Set(turn.toolsUsed)] : [],
    actions: turn?.actions ?? 0,
    /** The turn's resolution (the existing query keeps its own when null). */
    resolution: turn?.resolution ?? null,
    /** A new query's: opened already in the state the turn leaves it in. */
    status: !turn ? 'open' : resolved ? 'resolved' : 'in_progress',
    openedResolution: resolved ? (turn?.resolution ?? '') : '',
    resolvedAt: resolved ? v.now : null,
    resolutionMethod: resolved ? (escalated ? 'human' : 'automated') : null,
  };
}

export type TurnRecordParams = ReturnType<typeof turnRecordParams>;

/**
 * The support side of a chat turn's single statement, as common table expressions following
 * the caller's `conv(id, support_query_id, external_user_id, deployment_id, feedback_rating)`
 * (the conversation row, locked): `sq_end_user` (the conversation's end user, when it has no
 * query yet), `sq_opened` (a new query, inserted already in the state the turn leaves it in,
 * carrying a rating given before the first turn), `sq_moved` (the existing query moved by the
 * turn: counters, tools, escalation, status — as the recorder's `recordAgentTurn` moves it; with
 * no turn, `moves` false, only the rating given before it). Exactly one of `sq_opened` and
 * `sq_moved` writes a row; both return `(id, user_id)`. `v` holds the values (`turnRecordParams`),
 * or a compiled statement's placeholders for them.
 */
export function turnRecordCtes(v: TurnRecordParams, moves: boolean) {
  const existing = sql`coalesce(conv.support_query_id,
    (select s.id from support_queries s where s.company_id = ${v.companyId} and s.conversation_id = conv.id))`;
  const moved = moves
    ? sql`update support_queries q set
        agent_actions_count = q.agent_actions_count + ${v.actions}::int,
        tools_used = q.tools_used || array(select t from unnest(${v.tools}::text[]) with ordinality u(t, i)
                                           where t <> all(q.tools_used) order by i),
        escalated_to_human = q.escalated_to_human or ${v.escalated},
        updated_at = ${v.now},
        resolution = coalesce(${v.resolution}::text, q.resolution),
        status = case when ${v.resolved} and q.status <> 'resolved' then 'resolved'
                      when ${v.escalated} and q.status = 'resolved' then 'in_progress'
                      when q.status = 'open' then 'in_progress' else q.status end,
        resolved_at = case when ${v.resolved} and q.status <> 'resolved' then ${v.now}
                           when ${v.escalated} and q.status = 'resolved' then null else q.resolved_at end,
        resolution_method = case when ${v.resolved} and q.status <> 'resolved'
                                   then case when q.escalated_to_human or ${v.escalated} then 'human' else 'automated' end
                                 when ${v.escalated} and q.status = 'resolved' then null else q.resolution_method end,
        customer_satisfaction = case when conv.support_query_id is null
                                     then coalesce(conv.feedback_rating, q.customer_satisfaction)
                                     else q.customer_satisfaction end
      from conv where q.company_id = ${v.companyId} and q.id = ${existing} and q.status <> 'closed'
      returning q.id, q.user_id`
    : sql`update support_queries q set customer_satisfaction = conv.feedback_rating, updated_at = ${v.now}
      from conv where conv.support_query_id is null and conv.feedback_rating is not null
        and q.company_id = ${v.companyId} and q.id = ${existing}
      returning q.id, q.user_id`;
  return sql`sq_end_user as (
      insert into end_users as e (company_id, external_id, email, name)
      select ${v.companyId}, coalesce(conv.external_user_id, 'conversation:' || conv.id), null,
        coalesce(conv.external_user_id, 'Anonymous visitor')
      from conv where conv.support_query_id is null
      on conflict (company_id, external_id) do update set updated_at = e.updated_at
      returning e.id
    ),
    sq_opened as (
      insert into support_queries (company_id, user_id, agent_id, deployment_id, conversation_id, query_type, priority,
        subject, description, status, resolution, agent_actions_count, tools_used, escalated_to_human, resolved_at,
        resolution_method, customer_satisfaction, created_at, updated_at)
      select ${v.companyId}, u.id, ${v.agentId}, conv.deployment_id, conv.id, ${v.queryType}, ${v.priority},
        ${v.subject}, ${v.description}, ${v.status}, ${v.openedResolution}, ${v.actions}::int,
        ${v.tools}::text[], ${v.escalated}, ${v.resolvedAt}::timestamptz,
        ${v.resolutionMethod}::text, conv.feedback_rating, ${v.now}, ${v.now}
      from conv cross join sq_end_user u
      where not exists (select 1 from support_queries s where s.company_id = ${v.companyId} and s.conversation_id = conv.id)
      on conflict (conversation_id) where conversation_id is not null do nothing
      returning id, user_id
    ),
    sq_moved as (${moved})`;
}

/**
 * The turn's query (the conversation's, else the one recorded for it) locked after the caller's
 * `conv_locked(id, support_query_id)` (the conversation row, locked first: the order a conversation's
 * closing takes too), as the CTE `sq_state(closed)`. Locking reads the row's latest version, so a
 * query closed while the turn was answering is seen closed even though the statement's snapshot
 * predates the closing.
 */
export function turnQueryLock(companyId: string) {
  return sql`sq_state as (
      select s.status = 'closed' as closed from support_queries s, conv_locked
      where s.company_id = ${companyId} and s.id = coalesce(conv_locked.support_query_id,
        (select s2.id from support_queries s2 where s2.company_id = ${companyId} and s2.conversation_id = conv_locked.id))
      for update of s
    )`;
}

/** Whether `sq_state` (turnQueryLock) found the turn's query closed: a closed query takes no more agent turns. */
export const turnQueryClosed = sql<boolean>`exists (select 1 from sq_state where sq_state.closed)`;
