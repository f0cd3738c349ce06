import { sql, type Insertable, type QueryCreator, type RawBuilder } from 'kysely';
import { prepared, type Executor } from '../../db/database.js';
import type { Database } from '../../db/schema.js';
import { statement, statementShapes, type Statement } from '../../db/statements.js';
import type { ChatPendingTurnsTable, Citation, ConversationsTable } from './chat.tables.js';

export type NewConversation = Insertable<ConversationsTable>;

/**
 * The insert of a new conversation, columns named one by one (a turn sets the id and times
 * itself; nothing else is passed through); also the first part of the turn journal's statement.
 */
export function conversationInsert(qc: QueryCreator<Database>, values: NewConversation) {
  return qc.insertInto('conversations').values({
    id: values.id,
    company_id: values.company_id,
    agent_id: values.agent_id,
    deployment_id: values.deployment_id,
    chat_token_id: values.chat_token_id,
    title: values.title,
    status: values.status,
    external_user_id: values.external_user_id,
    end_user_id: values.end_user_id,
    support_query_id: values.support_query_id,
    workflow_id: values.workflow_id,
    channel: values.channel,
    region: values.region,
    last_message_at: values.last_message_at,
    closed_at: values.closed_at,
    created_at: values.created_at,
    updated_at: values.updated_at,
  });
}

/** A turn in progress, as the turn journal writes it (chat.turn-journal.ts). */
export type PendingTurnRow = Omit<ChatPendingTurnsTable, 'started_at'>;

/** The journal's insert, alone or after its new conversation's (compiled once per shape). */
const journalInsert = statementShapes(
  (shape: 'turn' | 'conversation and turn') => (db, p: { turn: PendingTurnRow; conversation: NewConversation }) => {
    const insert =
      shape === 'conversation and turn'
        ? db
            .with('conversation', (qc) => conversationInsert(qc, p.conversation).returning('id'))
            .insertInto('chat_pending_turns')
        : db.insertInto('chat_pending_turns');
    return insert
      .values({
        id: p.turn.id,
        company_id: p.turn.company_id,
        conversation_id: p.turn.conversation_id,
        agent_id: p.turn.agent_id,
        deployment_id: p.turn.deployment_id,
        query: p.turn.query,
        owner: p.turn.owner,
      })
      .onConflict((oc) => oc.column('id').doUpdateSet({ query: p.turn.query }));
  },
);

/** The turn into the journal; with `conversation`, its new conversation's row in the same statement. */
export async function insertPendingTurn(db: Executor, turn: PendingTurnRow, conversation?: NewConversation) {
  await journalInsert(conversation ? 'conversation and turn' : 'turn').execute(db, {
    turn,
    conversation: conversation!,
  });
}

const journalDelete = statement((db, p: { id: string; owner: string }) =>
  db.deleteFrom('chat_pending_turns').where('id', '=', p.id).where('owner', '=', p.owner),
);

/** The turn out of the journal (its owner's row only). */
export async function deletePendingTurn(db: Executor, id: string, owner: string) {
  await journalDelete.execute(db, { id, owner });
}

export async function insertConversation(db: Executor, values: NewConversation) {
  return conversationInsert(db, values).returningAll().executeTakeFirstOrThrow();
}

export type ConversationRow = Awaited<ReturnType<typeof insertConversation>>;

/** A conversation of the company (and of `agentId` when the token is bound to one). */
export async function findConversation(
  db: Executor,
  companyId: string,
  conversationId: string,
  agentId: string | null,
) {
  let query = db
    .selectFrom('conversations')
    .selectAll()
    .where('company_id', '=', companyId)
    .where('id', '=', conversationId);
  if (agentId) query = query.where('agent_id', '=', agentId);
  return query.executeTakeFirst();
}

export interface ConversationFilter {
  agentId?: string | undefined;
  user?: string | undefined;
  status?: 'open' | 'closed' | undefined;
}

export async function listConversations(
  db: Executor,
  companyId: string,
  filter: ConversationFilter,
  skip: number,
  limit: number,
) {
  let base = db.selectFrom('conversations').where('company_id', '=', companyId);
  if (filter.agentId) base = base.where('agent_id', '=', filter.agentId);
  if (filter.user) base = base.where('external_user_id', '=', filter.user);
  if (filter.status) base = base.where('status', '=', filter.status);
  const [rows, count] = await Promise.all([
    base.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').offset(skip).limit(limit).execute(),
    base.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: count.total };
}

export async function updateConversation(
  db: Executor,
  companyId: string,
  conversationId: string,
  values: {
    title?: string;
    status?: 'open' | 'closed';
    closed_at?: Date;
    support_query_id?: string;
    end_user_id?: string;
  },
) {
  return db
    .updateTable('conversations')
    .set({
      title: values.title,
      status: values.status,
      closed_at: values.closed_at,
      support_query_id: values.support_query_id,
      end_user_id: values.end_user_id,
      updated_at: sql`now()`,
    })
    .where('company_id', '=', companyId)
    .where('id', '=', conversationId)
    .returningAll()
    .executeTakeFirst();
}

/** Locks the conversation row for the turn being written (turns of one conversation serialise). */
export async function lockConversation(db: Executor, companyId: string, conversationId: string) {
  return db
    .selectFrom('conversations')
    .selectAll()
    .where('company_id', '=', companyId)
    .where('id', '=', conversationId)
    .forUpdate()
    .executeTakeFirst();
}

export interface NewMessage {
  /** Made by the caller when it must be known before the insert (a streamed turn's answer). */
  id?: string;
  role: 'user' | 'assistant';
  content: string;
  citations?: Citation[];
  /** The turn's tool calls (an assistant message). */
  toolCalls?: object[];
  model?: string | null;
  was_resolved?: boolean | null;
  response_time_ms?: number | null;
  finish_reason?: 'stop' | 'aborted' | 'error' | null;
}

/** Appends messages in order and moves the conversation's counters in the same statement pair. */
export async function appendMessages(db: Executor, companyId: string, conversationId: string, messages: NewMessage[]) {
  const rows = await db
    .insertInto('conversation_messages')
    .values(
      messages.map((message) => ({
        ...(message.id ? { id: message.id } : {}),
        company_id: companyId,
        conversation_id: conversationId,
        role: message.role,
        content: message.content,
        citations: JSON.stringify(message.citations ?? []),
        tool_calls: JSON.stringify(message.toolCalls ?? []),
        model: message.model ?? null,
        was_resolved: message.was_resolved ?? null,
        response_time_ms: message.response_time_ms ?? null,
        finish_reason: message.finish_reason ?? null,
      })),
    )
    .returningAll()
    .execute();
  await db
    .updateTable('conversations')
    .set((eb) => ({
      message_count: eb('message_count', '+', messages.length),
      last_message_at: sql`now()`,
      updated_at: sql`now()`,
    }))
    .where('company_id', '=', companyId)
    .where('id', '=', conversationId)
    .execute();
  return rows;
}

export type MessageRow = Awaited<ReturnType<typeof appendMessages>>[number];

/** An assistant message of the company (and of `agentId`'s conversations when given): a streamed turn's stored answer. */
export async function findAnswer(db: Executor, companyId: string, messageId: string, agentId: string | null) {
  let query = db
    .selectFrom('conversation_messages as m')
    .innerJoin('conversations as c', 'c.id', 'm.conversation_id')
    .select([
      'm.id',
      'm.conversation_id',
      'm.content',
      'm.citations',
      'm.was_resolved',
      'm.response_time_ms',
      'm.finish_reason',
    ])
    .where('m.company_id', '=', companyId)
    .where('c.company_id', '=', companyId)
    .where('m.id', '=', messageId)
    .where('m.role', '=', 'assistant');
  if (agentId) query = query.where('c.agent_id', '=', agentId);
  return query.executeTakeFirst();
}

export type AnswerRow = NonNullable<Awaited<ReturnType<typeof findAnswer>>>;

/** The last `limit` messages, oldest first (the model's history). */
export async function recentMessages(db: Executor, companyId: string, conversationId: string, limit: number) {
  if (limit === 0) return [];
  const rows = await db
    .selectFrom('conversation_messages')
    .select(['role', 'content'])
    .where('company_id', '=', companyId)
    .where('conversation_id', '=', conversationId)
    .orderBy('seq', 'desc')
    .limit(limit)
    .execute();
  return rows.reverse();
}

/** One page of messages after (asc) or before (desc) the cursor's sequence number. */
export async function pageMessages(
  db: Executor,
  companyId: string,
  conversationId: string,
  order: 'asc' | 'desc',
  afterSeq: number | null,
  limit: number,
) {
  let query = db
    .selectFrom('conversation_messages')
    .selectAll()
    .where('company_id', '=', companyId)
    .where('conversation_id', '=', conversationId);
  if (afterSeq !== null) query = query.where('seq', order === 'asc' ? '>' : '<', afterSeq);
  return query
    .orderBy('seq', order)
    .limit(limit + 1)
    .execute();
}

export async function upsertFeedback(
  db: Executor,
  companyId: string,
  conversationId: string,
  rating: number,
  comment: string,
) {
  return db
    .insertInto('conversation_feedback')
    .values({ company_id: companyId, conversation_id: conversationId, rating, comment })
    .onConflict((oc) => oc.column('conversation_id').doUpdateSet({ rating, comment, updated_at: sql`now()` }))
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function findFeedback(db: Executor, companyId: string, conversationId: string) {
  return db
    .selectFrom('conversation_feedback')
    .select(['rating'])
    .where('company_id', '=', companyId)
    .where('conversation_id', '=', conversationId)
    .executeTakeFirst();
}

/** Whether the deployment exists in the company for this agent (the deployments module's table, read only). */
export async function deploymentExists(
  db: Executor,
  companyId: string,
  deploymentId: string,
  agentId: string,
): Promise<boolean> {
  const row = await db
    .selectFrom('deployments')
    .select('id')
    .where('id', '=', deploymentId)
    .where('company_id', '=', companyId)
    .where('agent_id', '=', agentId)
    .executeTakeFirst();
  return row !== undefined;
}

export interface TurnWriteResult {
  written: boolean;
  queryId: string | null;
  /** Nothing was written (refuseClosed): the support query is closed. */
  closed: boolean;
  /** Nothing was written (refuseClosed): the conversation is closed. */
  conversationClosed: boolean;
  recorded: boolean;
}

/**
 * The support query's part of a turn's write, from the support-queries module: `params`, its
 * values; `lock`, a common table expression following `conv_locked` that locks the turn's query;
 * `closed`, whether it found it closed; `ctes`, the writes following `conv` — SQL over `params`
 * (or a compiled statement's placeholders for them) whose text depends on `shape` alone.
 */
export interface TurnSupportPart {
  shape: string;
  params: object;
  lock(params: object): RawBuilder<unknown>;
  ctes(params: object, shape: string): RawBuilder<unknown>;
  closed: RawBuilder<boolean>;
}

/** One turn's write (see `writeTurn`). */
export interface TurnWrite {
  companyId: string;
  conversationId: string;
  /** The user's message, then the answer (ids made by the caller). */
  messages: [NewMessage & { id: string }, NewMessage & { id: string }];
  /** The support query's part; null without support records. */
  support: TurnSupportPart | null;
  /** A closed conversation or support query refuses the turn (nothing is written). */
  refuseClosed: boolean;
}

/** A message's columns as the turn's statement binds them. */
function messageValues(m: NewMessage & { id: string }) {
  return {
    id: m.id,
    role: m.role,
    content: m.content,
    citations: JSON.stringify(m.citations ?? []),
    toolCalls: JSON.stringify(m.toolCalls ?? []),
    model: m.model ?? null,
    wasResolved: m.was_resolved ?? null,
    responseTimeMs: m.response_time_ms ?? null,
    finishReason: m.finish_reason ?? null,
  };
}

interface TurnWriteParams {
  companyId: string;
  conversationId: string;
  user: ReturnType<typeof messageValues>;
  answer: ReturnType<typeof messageValues>;
  support: object;
}

interface TurnWriteRow {
  written: number;
  query_id: string | null;
  closed: boolean | null;
  conversation_closed: boolean | null;
  recorded: boolean;
}

/** The turn's statement for one shape (support part or none, refusing closed ones or not). */
function turnWriteSql(p: TurnWriteParams, support: TurnSupportPart | null, refuse: boolean) {
  const { companyId, conversationId } = p;
  const rows = [p.user, p.answer].map(
    (m) =>
      sql`(${m.id}, ${m.role}, ${m.content}, ${m.citations}, ${m.toolCalls},
        ${m.model}, ${m.wasResolved}, ${m.responseTimeMs}, ${m.finishReason})`,
  );
  const lock = support && refuse ? sql`${support.lock(p.support)},` : sql``;
  const queryClosed = support && refuse ? support.closed : sql<boolean>`false`;
  const open = refuse ? sql`where conv_locked.status <> 'closed' and not ${queryClosed}` : sql``;
  const supportCtes = support ? sql`${support.ctes(p.support, support.shape)},` : sql``;
  const supportSet = support
    ? sql`, support_query_id = coalesce(c.support_query_id, (select id from sq_opened), (select id from sq_moved)),
        end_user_id = case when c.support_query_id is null then coalesce((select id from sq_end_user), c.end_user_id)
                           else c.end_user_id end`
    : sql``;
  const recorded = support ? sql`(select count(*) from sq_opened) + (select count(*) from sq_moved) > 0` : sql`false`;
  // A named prepared statement: its text takes a few shapes (support or not, a finished turn or
  // not), and planning this CTE costs more than running it.
  return prepared(sql<TurnWriteRow>`
    with conv_locked as (
      select c.id, c.agent_id, c.support_query_id, c.external_user_id, c.deployment_id, c.status,
        (select f.rating from conversation_feedback f
         where f.company_id = ${companyId} and f.conversation_id = c.id) as feedback_rating
      from conversations c where c.company_id = ${companyId} and c.id = ${conversationId}
      for update of c
    ),
    ${lock}
    conv as (select * from conv_locked ${open}),
    messages as (
      insert into conversation_messages (id, company_id, conversation_id, role, content, citations, tool_calls, model,
        was_resolved, response_time_ms, finish_reason, agent_id)
      select v.id::uuid, ${companyId}, conv.id, v.role, v.content, v.citations::jsonb, v.tool_calls::jsonb, v.model,
        v.was_resolved::boolean, v.response_time_ms::int, v.finish_reason,
        -- the answering agent, read with the locked row (the trigger of migration 0080 need not look it up)
        case when v.role = 'assistant' then conv.agent_id end
      from conv cross join (values ${sql.join(rows)})
        as v (id, role, content, citations, tool_calls, model, was_resolved, response_time_ms, finish_reason)
      returning id
    ),
    ${supportCtes}
    conv_set as (
      update conversations c set message_count = c.message_count + (select count(*) from messages),
        last_message_at = now(), updated_at = now() ${supportSet}
      from conv where c.company_id = ${companyId} and c.id = conv.id
      returning c.support_query_id
    )
    select (select count(*) from conv)::int as written, (select support_query_id from conv_set) as query_id,
      ${queryClosed} as closed, exists (select 1 from conv_locked where status = 'closed') as conversation_closed,
      ${recorded} as recorded`);
}

/** The turn's statements, compiled once per shape. */
const turnWrites = new Map<string, Statement<TurnWriteParams, TurnWriteRow>>();

/**
 * A turn's records in one statement, so one round trip (and, outside a transaction, one commit):
 * the conversation row locked (turns of one conversation serialise) with a rating given before
 * its first turn, then its support query locked, both messages, the support query opened or moved,
 * the conversation's counters and query. `written` is false when the conversation is gone or
 * (refuseClosed) it or its query is closed — as locked, so a closing that committed while the turn
 * was answering refuses it, though it is not in the statement's snapshot;
 * `recorded` is false when the support part wrote no query row: a query another turn opened
 * after this statement's snapshot (it waited for that turn's lock) is not visible to it.
 */
export async function writeTurn(db: Executor, write: TurnWrite): Promise<TurnWriteResult> {
  const { support } = write;
  const refuse = write.refuseClosed;
  const shape = `${support ? support.shape : 'no support'}:${refuse ? 'refuse closed' : 'take all'}`;
  let turnWrite = turnWrites.get(shape);
  if (!turnWrite) turnWrites.set(shape, (turnWrite = statement((_, p) => turnWriteSql(p, support, refuse))));
  const result = await turnWrite.execute(db, {
    companyId: write.companyId,
    conversationId: write.conversationId,
    user: messageValues(write.messages[0]),
    answer: messageValues(write.messages[1]),
    support: support?.params ?? {},
  });
  const row = result.rows[0]!;
  return {
    written: row.written > 0,
    queryId: row.query_id,
    closed: refuse && row.closed === true,
    conversationClosed: refuse && row.conversation_closed === true,
    recorded: row.recorded,
  };
}
