/**
 * SQL of the channels module. Every function takes the executor first. A thread's events are
 * worked one at a time and in order: claiming, finishing and handing back lock the thread row.
 */
import { sql } from 'kysely';
import type { Executor } from '../../db/database.js';
import type { EventInput, InboundEvent } from './channels.inbound.js';
import type { ChannelEventState, ChannelName } from './channels.tables.js';

/** How long the vendor ids of accepted messages are kept (Slack and Meta retry within hours). */
export const KEY_RETENTION = '2 days';
/** How long finished events are kept (what was answered, for diagnosis). */
export const EVENT_RETENTION = '7 days';

export interface ThreadRow {
  deployment_id: string;
  thread_key: string;
  company_id: string;
  channel: ChannelName;
  conversation_id: string | null;
  reply_to: Record<string, unknown>;
}

export interface StoredAnswer {
  /** The answer in Markdown (rendered for the vendor when sent). */
  text: string;
  sources: { title: string; url: string | null }[];
}

export interface EventRow {
  id: string;
  deployment_id: string;
  thread_key: string;
  company_id: string;
  kind: 'message' | 'welcome';
  input: EventInput;
  state: ChannelEventState;
  attempts: number;
  worker_id: number | null;
  answer: StoredAnswer | null;
  /** The event's thread as read under its lock when the event was claimed. */
  thread?: ThreadRow;
}

export interface AcceptedEvents {
  /** Events written and already held by the claiming worker (their thread was new), in order. */
  claimed: EventRow[];
  /** Events written but not held, with their thread as locked by this transaction (it existed). */
  waiting: { id: string; thread: ThreadRow }[];
  /** Events dropped as duplicates (a key already seen) or follow-ups of unknown threads. */
  dropped: number;
}

type AcceptedRow = EventRow & {
  claimed: boolean;
  channel: ChannelName;
  conversation_id: string | null;
  reply_to: Record<string, unknown>;
};

/** An accepted row as the event it wrote, with its thread beside it. */
function acceptedEvent(row: AcceptedRow): EventRow & { thread: ThreadRow } {
  const { claimed: _claimed, channel, conversation_id, reply_to, ...stored } = row;
  const thread = {
    deployment_id: row.deployment_id,
    thread_key: row.thread_key,
    company_id: row.company_id,
    channel,
    conversation_id,
    reply_to,
  };
  return { ...stored, thread };
}

/**
 * Writes what a vendor request brought, inside the caller's transaction, one statement per
 * event: its keys first (`on conflict do nothing`: any key seen before makes it a duplicate — the
 * unique index is what makes this hold across instances and concurrent deliveries), then its
 * thread (created, or its reply addressing refreshed: either way locked until the caller
 * commits), then the event. A follow-up of a thread not known writes nothing. The thread and the
 * event are written only when every key was new.
 *
 * With `claim`, an event whose thread this statement created is written held by `claim.workerId`
 * (at most `claim.max` of them): a new thread has no other event, and no one else sees it before
 * the commit, so it is claimed without the lock-then-claim of `claimEvent`. Every other event
 * written is returned as waiting, its thread row locked here, for `claimNext` or a job.
 */
export async function acceptEvents(
  trx: Executor,
  deployment: { id: string; company_id: string; channel: ChannelName },
  events: readonly InboundEvent[],
  claim?: { workerId: number; max: number },
): Promise<AcceptedEvents> {
  const accepted: AcceptedEvents = { claimed: [], waiting: [], dropped: 0 };
  for (const event of events) {
    const claimFor = claim && accepted.claimed.length < claim.max ? claim.workerId : null;
    const replyTo = JSON.stringify(event.replyTo);
    const { rows } = await sql<AcceptedRow>`
      with known as (
        select ${!event.followUpOnly}::boolean or exists (
          select 1 from channel_threads
          where deployment_id = ${deployment.id}::uuid and thread_key = ${event.threadKey}::text
        ) as ok
      ),
      inserted as (
        insert into channel_event_keys (deployment_id, key)
        select ${deployment.id}::uuid, key from unnest(${event.keys}::text[]) as key where (select ok from known)
        on conflict do nothing
        returning key
      ),
      fresh as (
        select (select ok from known) and (select count(*) from inserted) = ${event.keys.length} as ok
      ),
      thread as (
        insert into channel_threads (deployment_id, thread_key, company_id, channel, reply_to)
        select ${deployment.id}::uuid, ${event.threadKey}::text, ${deployment.company_id}::uuid,
          ${deployment.channel}::text, ${replyTo}::jsonb
        where (select ok from fresh)
        on conflict (deployment_id, thread_key) do update set reply_to = excluded.reply_to, updated_at = now()
        returning deployment_id, thread_key, company_id, channel, conversation_id, reply_to,
          (xmax = 0) and ${claimFor}::integer is not null as claimed
      ),
      event as (
        insert into channel_events (deployment_id, thread_key, company_id, kind, input, worker_id, attempts)
        select deployment_id, thread_key, company_id, ${event.kind}::text, ${JSON.stringify(event.input)}::jsonb,
          case when claimed then ${claimFor}::integer end, case when claimed then 1 else 0 end
        from thread
        returning id, deployment_id, thread_key, company_id, kind, input, state, attempts, worker_id, answer
      )
      select event.*, thread.claimed, thread.channel, thread.conversation_id, thread.reply_to from event, thread
    `.execute(trx);
    const row = rows[0];
    if (!row) {
      accepted.dropped++;
      continue;
    }
    const written = acceptedEvent(row);
    if (row.claimed) accepted.claimed.push(written);
    else accepted.waiting.push({ id: row.id, thread: written.thread });
  }
  return accepted;
}

/**
 * An event that starts a thread not seen yet, written in one statement outside any transaction
 * and held by `workerId`: the thread first (`on conflict do nothing`), then the keys and the event
 * only if it was created here — a thread no one has seen has no other event. Undefined, with
 * nothing written, when the thread exists (or the keys were seen: a redelivery): the caller then
 * accepts it with `acceptEvents`, which tells duplicates and follow-ups apart. (The two take the
 * thread and the keys in opposite orders: the same message written by both at once can deadlock,
 * and the one PostgreSQL aborts answers 500 — the vendor's retry is then a duplicate.)
 */
export async function acceptThreadStart(
  db: Executor,
  deployment: { id: string; company_id: string; channel: ChannelName },
  event: InboundEvent,
  workerId: number,
): Promise<EventRow | undefined> {
  const { rows } = await sql<AcceptedRow>`
    with thread as (
      insert into channel_threads (deployment_id, thread_key, company_id, channel, reply_to)
      select ${deployment.id}::uuid, ${event.threadKey}::text, ${deployment.company_id}::uuid,
        ${deployment.channel}::text, ${JSON.stringify(event.replyTo)}::jsonb
      where not exists (
        select 1 from channel_event_keys
        where deployment_id = ${deployment.id}::uuid and key = any(${event.keys}::text[])
      )
      on conflict (deployment_id, thread_key) do nothing
      returning deployment_id, thread_key, company_id, channel, conversation_id, reply_to
    ),
    inserted as (
      insert into channel_event_keys (deployment_id, key)
      select ${deployment.id}::uuid, key from unnest(${event.keys}::text[]) as key where exists (select 1 from thread)
      on conflict do nothing
      returning key
    ),
    event as (
      insert into channel_events (deployment_id, thread_key, company_id, kind, input, worker_id, attempts)
      select deployment_id, thread_key, company_id, ${event.kind}::text, ${JSON.stringify(event.input)}::jsonb,
        ${workerId}::integer, 1
      from thread
      where (select count(*) from inserted) = ${event.keys.length}
      returning id, deployment_id, thread_key, company_id, kind, input, state, attempts, worker_id, answer
    )
    select event.*, true as claimed, thread.channel, thread.conversation_id, thread.reply_to from event, thread
  `.execute(db);
  const row = rows[0];
  if (!row) return undefined;
  return acceptedEvent(row);
}

const EVENT_COLUMNS = [
  'e.id',
  'e.deployment_id',
  'e.thread_key',
  'e.company_id',
  'e.kind',
  'e.input',
  'e.state',
  'e.attempts',
  'e.worker_id',
  'e.answer',
] as const;

/** Locks the thread of an event and reads it (what an answer needs: its conversation and addressing). */
async function lockThreadOf(trx: Executor, eventId: string): Promise<ThreadRow | undefined> {
  return (await trx
    .selectFrom('channel_events as e')
    .innerJoin('channel_threads as t', (join) =>
      join.onRef('t.deployment_id', '=', 'e.deployment_id').onRef('t.thread_key', '=', 'e.thread_key'),
    )
    .select(['t.deployment_id', 't.thread_key', 't.company_id', 't.channel', 't.conversation_id', 't.reply_to'])
    .where('e.id', '=', eventId)
    .forUpdate('t')
    .executeTakeFirst()) as ThreadRow | undefined;
}

/**
 * Takes the next event of a thread for `workerId`, under the thread's lock (taken by the caller's
 * earlier statement, so this one sees every committed change): none while another event of the
 * thread is held (its holder goes on with the next when it finishes), else the oldest unfinished
 * one — read and taken in one statement.
 */
export async function claimNext(
  trx: Executor,
  thread: ThreadRow,
  workerId: number | null,
): Promise<EventRow | undefined> {
  const { rows } = await sql<EventRow>`
    with open as (
      select id, worker_id, row_number() over (order by created_at, id) as n
      from channel_events
      where deployment_id = ${thread.deployment_id}::uuid and thread_key = ${thread.thread_key}::text and state <> 'done'
    ),
    next as (
      select id from open where n = 1 and not exists (select 1 from open where worker_id is not null)
    )
    update channel_events as e
    set worker_id = ${workerId ?? 0}::integer, attempts = e.attempts + 1, updated_at = now()
    from next
    where e.id = next.id
    returning ${sql.join(EVENT_COLUMNS.map((column) => sql.ref(column)))}
  `.execute(trx);
  return rows[0] ? { ...rows[0], thread } : undefined;
}

/** Claims for `workerId` the thread of `eventId` (its next event, which may be an earlier one). */
export async function claimEvent(trx: Executor, eventId: string, workerId: number | null) {
  const thread = await lockThreadOf(trx, eventId);
  return thread ? claimNext(trx, thread, workerId) : undefined;
}

/** Keeps the answer of a held event before it is sent (fenced: only its holder writes). */
export async function saveAnswer(db: Executor, event: EventRow, answer: StoredAnswer): Promise<boolean> {
  const result = await db
    .updateTable('channel_events')
    .set({ state: 'answered', answer: JSON.stringify(answer), updated_at: sql`now()` })
    .where('id', '=', event.id)
    .where('worker_id', '=', event.worker_id)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Finishes a held event and takes the thread's next one for the same holder, under the thread's lock. */
export async function finishAndClaimNext(trx: Executor, event: EventRow, error: string | null) {
  const thread = await lockThreadOf(trx, event.id);
  await trx
    .updateTable('channel_events')
    .set({ state: 'done', worker_id: null, error, updated_at: sql`now()` })
    .where('id', '=', event.id)
    .where('worker_id', '=', event.worker_id)
    .execute();
  return thread ? claimNext(trx, thread, event.worker_id) : undefined;
}

/** Hands held events back (their worker died, or one run failed): ids of those released. */
export async function releaseEvents(
  trx: Executor,
  owners: { workerIds: readonly number[] } | { only: { id: string; worker_id: number | null } },
): Promise<string[]> {
  let query = trx
    .updateTable('channel_events')
    .set({ worker_id: null, updated_at: sql`now()` })
    .where('state', '<>', 'done');
  if ('workerIds' in owners) {
    if (owners.workerIds.length === 0) return [];
    query = query.where('worker_id', 'in', [...owners.workerIds]);
  } else {
    query = query.where('id', '=', owners.only.id).where('worker_id', '=', owners.only.worker_id);
  }
  return (await query.returning('id').execute()).map((row) => row.id);
}

export async function findThread(
  db: Executor,
  deploymentId: string,
  threadKey: string,
): Promise<ThreadRow | undefined> {
  return (await db
    .selectFrom('channel_threads')
    .select(['deployment_id', 'thread_key', 'company_id', 'channel', 'conversation_id', 'reply_to'])
    .where('deployment_id', '=', deploymentId)
    .where('thread_key', '=', threadKey)
    .executeTakeFirst()) as ThreadRow | undefined;
}

/** The thread a conversation answers (a person's reply goes there). */
export async function threadOfConversation(
  db: Executor,
  companyId: string,
  conversationId: string,
): Promise<ThreadRow | undefined> {
  return (await db
    .selectFrom('channel_threads')
    .select(['deployment_id', 'thread_key', 'company_id', 'channel', 'conversation_id', 'reply_to'])
    .where('company_id', '=', companyId)
    .where('conversation_id', '=', conversationId)
    .executeTakeFirst()) as ThreadRow | undefined;
}

export async function setThreadConversation(db: Executor, thread: ThreadRow, conversationId: string): Promise<void> {
  await db
    .updateTable('channel_threads')
    .set({ conversation_id: conversationId, updated_at: sql`now()` })
    .where('deployment_id', '=', thread.deployment_id)
    .where('thread_key', '=', thread.thread_key)
    .execute();
}

/**
 * Whether a notice of `kind` may be written for the deployment now: true (and the time taken)
 * when none was in the last `seconds`, on any instance.
 */
export async function takeNotice(db: Executor, deploymentId: string, kind: string, seconds: number): Promise<boolean> {
  const result = await sql<{ taken: boolean }>`
    insert into channel_notices as n (deployment_id, kind, last_at) values (${deploymentId}, ${kind}, now())
    on conflict (deployment_id, kind) do update set last_at = now()
      where n.last_at < now() - make_interval(secs => ${seconds})
    returning true as taken`.execute(db);
  return result.rows.length > 0;
}

/** The source URLs of cited documents (a citation links to its page when the document came from one). */
export async function documentSources(db: Executor, companyId: string, documentIds: readonly string[]) {
  if (documentIds.length === 0) return new Map<string, string>();
  const rows = await db
    .selectFrom('kb_documents')
    .select(['id', 'source_url'])
    .where('company_id', '=', companyId)
    .where('id', 'in', [...documentIds])
    .where('source_url', 'is not', null)
    .execute();
  return new Map(rows.map((row) => [row.id, row.source_url!]));
}

/** Deletes vendor keys and finished events past their retention. */
export async function pruneOld(db: Executor): Promise<void> {
  await sql`delete from channel_event_keys where created_at < now() - ${KEY_RETENTION}::interval`.execute(db);
  await sql`delete from channel_events where state = 'done' and updated_at < now() - ${EVENT_RETENTION}::interval`.execute(
    db,
  );
}
