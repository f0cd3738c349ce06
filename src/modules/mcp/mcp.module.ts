/**
 * The MCP server (DESIGN §15): a company's knowledge, agents and support queries to any MCP client
 * over the Streamable HTTP transport of the official SDK. One SDK server per session, built for the
 * session's caller (tools and resources scoped to its company, or a bound token's agent).
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Db } from '../../db/database.js';
import type { McpCaller } from './mcp.caller.js';
import type { McpDeps } from './mcp.deps.js';
import * as repo from './mcp.repo.js';
import { registerResources } from './mcp.resources.js';
import { createSessionStore, type SessionLimits } from './mcp.sessions.js';
import { registerTools } from './mcp.tools.js';

/** Agents named in ask_agent's description (the first, oldest deployments). */
const LISTED_AGENTS = 20;

export function createMcpModule(
  deps: Omit<McpDeps, 'knowledgeScopeOf' | 'collectionExists'> & { db: Db; limits: SessionLimits; version: string },
) {
  const full: McpDeps = {
    ...deps,
    knowledgeScopeOf: (companyId, agentId) => repo.agentCollections(deps.db, companyId, agentId),
    collectionExists: (companyId, collectionId) => repo.collectionExists(deps.db, companyId, collectionId),
  };
  return {
    sessions: createSessionStore(deps.limits),
    /** A new SDK server with the caller's tools and resources. */
    async buildServer(caller: McpCaller): Promise<McpServer> {
      const server = new McpServer(
        { name: 'switchboard', title: 'Switchboard', version: deps.version },
        {
          instructions:
            "Switchboard: search the company's knowledge base, ask its deployed agents, and read its support queries. Documents and collections are resources.",
        },
      );
      const agents = await repo.listServable(deps.db, caller.companyId, caller.agentId, LISTED_AGENTS);
      registerTools(server, full, caller, agents);
      registerResources(server, full, caller);
      return server;
    },
  };
}

export type McpModule = ReturnType<typeof createMcpModule>;
