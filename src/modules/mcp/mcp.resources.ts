/**
 * The MCP server's resources: every collection (`switchboard://collections/{id}`, its record and
 * its first documents as JSON) and every completed document (`switchboard://documents/{id}`, its
 * extracted text), listed newest first a page at a time (`nextCursor`: an opaque keyset). A bound
 * token's session lists and reads its agent's collections only (when the agent has some).
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import {
  ErrorCode,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  type Resource,
} from '@modelcontextprotocol/sdk/types.js';
import { AppError } from '../../http/errors.js';
import type { McpCaller } from './mcp.caller.js';
import type { McpDeps } from './mcp.deps.js';
import * as repo from './mcp.repo.js';
import { knowledgeScope } from './mcp.tools.js';

/** Resources per page of `resources/list`. */
export const RESOURCE_PAGE = 50;

const UUID = '[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}';
const RESOURCE_URI = new RegExp(`^switchboard://(collections|documents)/(${UUID})$`);

interface Cursor {
  /** c: collections, d: documents (listed after the collections). */
  t: 'c' | 'd';
  at?: string;
  id?: string;
}

function encodeCursor(cursor: Cursor): string {
  return Buffer.from(JSON.stringify(cursor)).toString('base64url');
}

function decodeCursor(text: string | undefined): Cursor {
  if (text === undefined) return { t: 'c' };
  try {
    const value = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as Cursor;
    const keyset = value.at === undefined && value.id === undefined;
    const validKeyset =
      typeof value.at === 'string' &&
      !Number.isNaN(Date.parse(value.at)) &&
      typeof value.id === 'string' &&
      new RegExp(`^${UUID}$`).test(value.id);
    if ((value.t === 'c' || value.t === 'd') && (keyset || validKeyset)) return value;
  } catch {
    // fall through
  }
  throw new McpError(ErrorCode.InvalidParams, 'Invalid cursor: pass the nextCursor of the previous page as it came');
}

const collectionResource = (row: repo.ListedRow): Resource => ({
  uri: `switchboard://collections/${row.id}`,
  name: row.name,
  title: `Collection: ${row.name}`,
  description: row.description || undefined,
  mimeType: 'application/json',
});

const documentResource = (row: repo.ListedRow): Resource => ({
  uri: `switchboard://documents/${row.id}`,
  name: row.name,
  title: row.name,
  mimeType: 'text/plain',
});

/** A handler whose unexpected failures answer one plain sentence (the platform's refusals keep their words). */
function safe<R, A extends unknown[]>(deps: McpDeps, handler: (...args: A) => Promise<R>) {
  return async (...args: A): Promise<R> => {
    try {
      return await handler(...args);
    } catch (error) {
      if (error instanceof McpError) throw error;
      if (error instanceof AppError) throw new McpError(ErrorCode.InvalidRequest, error.message);
      deps.log.warn({ error: (error as Error)?.name }, 'MCP resource request failed unexpectedly');
      throw new McpError(ErrorCode.InternalError, 'The resource could not be read; try again later');
    }
  };
}

function notFound(uri: string): McpError {
  return new McpError(ErrorCode.InvalidParams, `Resource not found: ${uri.slice(0, 200)}`);
}

export function registerResources(server: McpServer, deps: McpDeps, caller: McpCaller): void {
  const low = server.server;
  low.registerCapabilities({ resources: {} });

  low.setRequestHandler(
    ListResourcesRequestSchema,
    safe(deps, async (request) => {
      const scope = await knowledgeScope(deps, caller);
      let cursor = decodeCursor(request.params?.cursor);
      const resources: Resource[] = [];
      if (cursor.t === 'c') {
        const from = cursor.at ? { at: cursor.at, id: cursor.id! } : null;
        const rows = await repo.collectionsPage(deps.db, caller.companyId, scope, from, RESOURCE_PAGE + 1);
        resources.push(...rows.slice(0, RESOURCE_PAGE).map(collectionResource));
        if (rows.length > RESOURCE_PAGE) {
          const last = rows[RESOURCE_PAGE - 1]!;
          return { resources, nextCursor: encodeCursor({ t: 'c', at: last.created_at.toISOString(), id: last.id }) };
        }
        cursor = { t: 'd' };
      }
      const room = RESOURCE_PAGE - resources.length;
      const from = cursor.at ? { at: cursor.at, id: cursor.id! } : null;
      const rows = await repo.documentsPage(deps.db, caller.companyId, scope, from, room + 1);
      resources.push(...rows.slice(0, room).map(documentResource));
      if (rows.length > room) {
        // A page that ended with the collections starts the documents on the next one.
        const last = room > 0 ? rows[room - 1]! : null;
        const next: Cursor = last ? { t: 'd', at: last.created_at.toISOString(), id: last.id } : { t: 'd' };
        return { resources, nextCursor: encodeCursor(next) };
      }
      return { resources };
    }),
  );

  low.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({
    resourceTemplates: [
      {
        uriTemplate: 'switchboard://documents/{id}',
        name: 'document',
        title: 'A knowledge-base document',
        description: "A document's extracted text",
        mimeType: 'text/plain',
      },
      {
        uriTemplate: 'switchboard://collections/{id}',
        name: 'collection',
        title: 'A knowledge-base collection',
        description: 'A collection and its newest documents, as JSON',
        mimeType: 'application/json',
      },
    ],
  }));

  low.setRequestHandler(
    ReadResourceRequestSchema,
    safe(deps, async (request) => {
      const uri = request.params.uri;
      const match = RESOURCE_URI.exec(uri);
      if (!match) throw notFound(uri);
      const [, kind, rawId] = match;
      const id = rawId!.toLowerCase();
      const scope = await knowledgeScope(deps, caller);
      try {
        if (kind === 'documents') {
          const collectionId = await repo.documentCollection(deps.db, caller.companyId, id);
          if (collectionId === undefined || (scope && (!collectionId || !scope.includes(collectionId))))
            throw notFound(uri);
          const document = await deps.knowledge.getDocument(caller.context, id);
          return { contents: [{ uri, mimeType: 'text/plain', text: document.content ?? '' }] };
        }
        if (scope && !scope.includes(id)) throw notFound(uri);
        const collection = await deps.knowledge.getCollection(caller.context, id);
        const documents = await repo.documentsPage(deps.db, caller.companyId, [id], null, RESOURCE_PAGE);
        const text = JSON.stringify({
          ...collection,
          documents: documents.map((row) => ({ uri: `switchboard://documents/${row.id}`, title: row.name })),
        });
        return { contents: [{ uri, mimeType: 'application/json', text }] };
      } catch (error) {
        if (error instanceof AppError && error.statusCode === 404) throw notFound(uri);
        throw error;
      }
    }),
  );
}
