/**
 * What the MCP server reads for itself (it writes nothing): the deployed agents a caller may ask
 * (through the deployments module's reader), an agent's collections, and pages of collections and documents for the resource lists (keyset
 * pages on the `(company_id, created_at desc)` indexes of both tables).
 */
import type { Executor } from '../../db/database.js';
import { listServableDeployments } from '../deployments/index.js';

export interface ServableAgent {
  agent_key: string;
  title: string;
}

/** Active agent and workflow deployments of the company as agent keys, oldest first (a bound token: its agent's only). */
export async function listServable(
  db: Executor,
  companyId: string,
  agentId: string | null,
  limit: number,
): Promise<ServableAgent[]> {
  const rows = await listServableDeployments(db, companyId, agentId, limit);
  return rows.map((row) => ({
    agent_key: `agent:${row.deployable_id}:${row.channel}:${row.region}`,
    title: row.title,
  }));
}

/** The agent's collections, or undefined when the company has no such agent. */
export async function agentCollections(
  db: Executor,
  companyId: string,
  agentId: string,
): Promise<string[] | undefined> {
  const row = await db
    .selectFrom('agents')
    .select('collection_ids')
    .where('company_id', '=', companyId)
    .where('id', '=', agentId)
    .executeTakeFirst();
  return row?.collection_ids;
}

/** Where a page starts: after this row of the `(created_at desc, id desc)` order. */
export interface Keyset {
  at: string;
  id: string;
}

export interface ListedRow {
  id: string;
  name: string;
  description: string;
  created_at: Date;
}

/** Collections of the company (within `scope` when given), newest first, after `from`. */
export async function collectionsPage(
  db: Executor,
  companyId: string,
  scope: readonly string[] | null,
  from: Keyset | null,
  limit: number,
): Promise<ListedRow[]> {
  let query = db
    .selectFrom('kb_collections')
    .select(['id', 'name', 'description', 'created_at'])
    .where('company_id', '=', companyId);
  if (scope) query = query.where('id', 'in', scope.length ? [...scope] : ['00000000-0000-0000-0000-000000000000']);
  if (from) query = query.where((eb) => eb(eb.refTuple('created_at', 'id'), '<', eb.tuple(new Date(from.at), from.id)));
  return query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
}

/** Completed documents of the company (within `scope` collections when given), newest first, after `from`. */
export async function documentsPage(
  db: Executor,
  companyId: string,
  scope: readonly string[] | null,
  from: Keyset | null,
  limit: number,
): Promise<ListedRow[]> {
  let query = db
    .selectFrom('kb_documents')
    .select(['id', 'title as name', 'mime_type as description', 'created_at'])
    .where('company_id', '=', companyId)
    .where('status', '=', 'completed');
  if (scope)
    query = query.where('collection_id', 'in', scope.length ? [...scope] : ['00000000-0000-0000-0000-000000000000']);
  if (from) query = query.where((eb) => eb(eb.refTuple('created_at', 'id'), '<', eb.tuple(new Date(from.at), from.id)));
  const rows = await query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
  return rows.map((row) => ({ ...row, description: row.description ?? 'text/plain' }));
}

/** The collection a company's document is in (null: none), or undefined when there is no such document. */
export async function documentCollection(
  db: Executor,
  companyId: string,
  documentId: string,
): Promise<string | null | undefined> {
  const row = await db
    .selectFrom('kb_documents')
    .select('collection_id')
    .where('company_id', '=', companyId)
    .where('id', '=', documentId)
    .executeTakeFirst();
  return row === undefined ? undefined : row.collection_id;
}

export async function collectionExists(db: Executor, companyId: string, collectionId: string): Promise<boolean> {
  const row = await db
    .selectFrom('kb_collections')
    .select('id')
    .where('company_id', '=', companyId)
    .where('id', '=', collectionId)
    .executeTakeFirst();
  return row !== undefined;
}
