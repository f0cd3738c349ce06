/**
 * SQL of the widget module: its keys and conversation owners, and read-only looks at the
 * deployments (with their region), chat messages and knowledge documents it serves.
 */
import { sql } from 'kysely';
import type { Executor } from '../../db/database.js';

/** A web deployment as the widget serves it. */
export interface WidgetDeploymentRow {
  id: string;
  company_id: string;
  deployable_id: string;
  agent_id: string;
  channel: string;
  status: string;
  config: string;
  region_slug: string;
  key: string | null;
}

function deployments(db: Executor) {
  return db
    .selectFrom('deployments as d')
    .innerJoin('regions as r', 'r.id', 'd.region_id')
    .leftJoin('widget_keys as k', 'k.deployment_id', 'd.id')
    .select([
      'd.id',
      'd.company_id',
      'd.deployable_id',
      'd.agent_id',
      'd.channel',
      'd.status',
      'd.config',
      'r.slug as region_slug',
      'k.key',
    ]);
}

/** The web deployment a publishable key opens (none for a rotated key or another channel). */
export async function findByKey(db: Executor, key: string): Promise<WidgetDeploymentRow | undefined> {
  return deployments(db).where('k.key', '=', key).where('d.channel', '=', 'web').executeTakeFirst();
}

/** A deployment of the company, with its key if it has one. */
export async function findDeployment(
  db: Executor,
  companyId: string,
  id: string,
): Promise<WidgetDeploymentRow | undefined> {
  return deployments(db).where('d.company_id', '=', companyId).where('d.id', '=', id).executeTakeFirst();
}

/** Gives the deployment `key` unless it already has one; returns the key in force. */
export async function ensureKey(db: Executor, companyId: string, deploymentId: string, key: string): Promise<string> {
  await db
    .insertInto('widget_keys')
    .values({ deployment_id: deploymentId, company_id: companyId, key })
    .onConflict((conflict) => conflict.column('deployment_id').doNothing())
    .execute();
  const row = await db
    .selectFrom('widget_keys')
    .select('key')
    .where('deployment_id', '=', deploymentId)
    .where('company_id', '=', companyId)
    .executeTakeFirstOrThrow();
  return row.key;
}

/** Replaces the deployment's key (the old one opens nothing from this commit on). */
export async function replaceKey(db: Executor, companyId: string, deploymentId: string, key: string): Promise<void> {
  await db
    .insertInto('widget_keys')
    .values({ deployment_id: deploymentId, company_id: companyId, key, rotated_at: sql<Date>`now()` })
    .onConflict((conflict) => conflict.column('deployment_id').doUpdateSet({ key, rotated_at: sql<Date>`now()` }))
    .execute();
}

/** Records that a conversation is this visitor's (once; a second call changes nothing). */
export async function bindConversation(
  db: Executor,
  row: { conversation_id: string; company_id: string; deployment_id: string; visitor_id: string },
): Promise<void> {
  await db
    .insertInto('widget_conversations')
    .values({
      conversation_id: row.conversation_id,
      company_id: row.company_id,
      deployment_id: row.deployment_id,
      visitor_id: row.visitor_id,
    })
    .onConflict((conflict) => conflict.column('conversation_id').doNothing())
    .execute();
}

/** The visitor a conversation of this deployment belongs to, if the widget started it. */
export async function ownerOf(db: Executor, deploymentId: string, conversationId: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('widget_conversations')
    .select('visitor_id')
    .where('conversation_id', '=', conversationId)
    .where('deployment_id', '=', deploymentId)
    .executeTakeFirst();
  return row?.visitor_id;
}

/** The visitor's latest conversation on this deployment. */
export async function latestConversation(
  db: Executor,
  deploymentId: string,
  visitorId: string,
): Promise<string | undefined> {
  const row = await db
    .selectFrom('widget_conversations')
    .select('conversation_id')
    .where('deployment_id', '=', deploymentId)
    .where('visitor_id', '=', visitorId)
    .orderBy('created_at', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row?.conversation_id;
}

/** The conversation of a stored answer (a turn's id is its answer's id). */
export async function conversationOfAnswer(
  db: Executor,
  companyId: string,
  messageId: string,
): Promise<string | undefined> {
  const row = await db
    .selectFrom('conversation_messages')
    .select('conversation_id')
    .where('company_id', '=', companyId)
    .where('id', '=', messageId)
    .executeTakeFirst();
  return row?.conversation_id;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The web address of each cited document that came from one (uploaded files have none), by the
 * id citations carry (`doc_<uuid>`).
 */
export async function documentUrls(
  db: Executor,
  companyId: string,
  documentIds: readonly string[],
): Promise<Map<string, string>> {
  const ids = [...new Set(documentIds.map((id) => id.replace(/^doc_/, '')).filter((id) => UUID.test(id)))];
  if (ids.length === 0) return new Map();
  const rows = await db
    .selectFrom('kb_documents')
    .select(['id', 'source_url'])
    .where('company_id', '=', companyId)
    .where('id', 'in', ids)
    .where('source_url', 'is not', null)
    .execute();
  return new Map(rows.map((row) => [`doc_${row.id}`, row.source_url!]));
}
