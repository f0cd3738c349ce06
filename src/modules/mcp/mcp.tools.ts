/**
 * The MCP server's tools (DESIGN §15): `search_knowledge` (the documents family's hybrid search,
 * with citations), `ask_agent` (a chat turn through the chat module, progress notifications while
 * the agent answers), `list_support_queries` and `get_support_query`. Input is checked by the
 * zod schemas the SDK validates against (unknown fields refused); a refusal or failure is a tool
 * error (`isError`) saying what went wrong, never a stack.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult, ServerNotification, ServerRequest } from '@modelcontextprotocol/sdk/types.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import { z } from 'zod';
import { AppError } from '../../http/errors.js';
import type { McpCaller } from './mcp.caller.js';
import type { McpDeps } from './mcp.deps.js';
import type { ServableAgent } from './mcp.repo.js';

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

const UUID = z.string().uuid();
const DATE = z.string().regex(/^\d{4}-\d{2}-\d{2}(T[\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/, 'must be an ISO 8601 date');

/** JSON as the tool's text (what every MCP client shows and a model reads). */
function json(data: unknown): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(data) }] };
}

/** A failure as a tool error: the platform's own words for refusals, one plain sentence otherwise. */
export function toolError(error: unknown, log: McpDeps['log'], tool: string): CallToolResult {
  const known = error instanceof AppError;
  if (!known) log.warn({ tool, error: (error as Error)?.name }, 'MCP tool failed unexpectedly');
  const text = known ? error.message : `${tool} failed unexpectedly; try again later`;
  return { content: [{ type: 'text', text }], isError: true };
}

/** The tool's callback, its failures turned into tool errors. */
function guarded<A>(log: McpDeps['log'], tool: string, run: (args: A, extra: Extra) => Promise<CallToolResult>) {
  return async (args: A, extra: Extra): Promise<CallToolResult> => {
    try {
      return await run(args, extra);
    } catch (error) {
      return toolError(error, log, tool);
    }
  };
}

/** The collections a caller's knowledge is limited to (a bound token's agent's), or null for all the company's. */
export async function knowledgeScope(deps: McpDeps, caller: McpCaller): Promise<string[] | null> {
  if (!caller.agentId) return null;
  const collections = await deps.knowledgeScopeOf(caller.companyId, caller.agentId);
  return collections && collections.length ? collections : null;
}

export function registerTools(server: McpServer, deps: McpDeps, caller: McpCaller, agents: ServableAgent[]): void {
  const { log } = deps;
  const notFound = (what: string, id: string) => new AppError(404, `${what} not found: ${id}`, 'NotFound');

  server.registerTool(
    'search_knowledge',
    {
      title: 'Search the knowledge base',
      description:
        "Hybrid search (vector, full text, exact phrases) over the company's knowledge base. Returns the best passages, each with its citation (document id and title, chunk id, score).",
      inputSchema: z
        .object({
          query: z.string().trim().min(1).max(4000).describe('What to look for'),
          top_k: z.number().int().min(1).max(20).default(4).describe('How many passages (default 4)'),
          collection_id: UUID.optional().describe('Only this collection'),
        })
        .strict(),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    guarded(log, 'search_knowledge', async (args, extra) => {
      const scope = await knowledgeScope(deps, caller);
      if (args.collection_id && scope && !scope.includes(args.collection_id.toLowerCase()))
        throw notFound('Collection', args.collection_id);
      if (args.collection_id && !(await deps.collectionExists(caller.companyId, args.collection_id)))
        throw notFound('Collection', args.collection_id);
      const output = await deps.knowledge.search(caller.companyId, {
        query: args.query,
        topK: args.top_k,
        ...(args.collection_id ? { collectionIds: [args.collection_id] } : scope ? { collectionIds: scope } : {}),
        signal: extra.signal,
      });
      return json({
        query: args.query,
        results: output.results.map((hit) => ({
          text: hit.text,
          citation: {
            document_id: hit.document_id,
            title: hit.title,
            chunk_id: hit.chunk_id,
            collection_id: hit.collection_id,
            uri: `switchboard://documents/${hit.document_id.replace(/^doc_/, '')}`,
          },
          score: hit.score,
        })),
        lanes: output.lanes,
      });
    }),
  );

  const keys = agents.map((agent) => `${agent.agent_key} (${agent.title})`).join('; ');
  server.registerTool(
    'ask_agent',
    {
      title: 'Ask a deployed agent',
      description: [
        'Asks one of the company’s deployed agents; the turn is recorded like any channel’s (conversation, support query).',
        'Pass conversation_id from an earlier answer to continue that conversation. Progress notifications carry the answer as it is written.',
        keys ? `Agent keys: ${keys}.` : 'No agent is deployed yet.',
      ].join(' '),
      inputSchema: z
        .object({
          agent_key: z
            .string()
            .min(1)
            .max(300)
            .optional()
            .describe('agent:<agent id>:<channel>:<region>; optional when only one agent is deployed'),
          query: z.string().trim().min(1).max(8000).describe('The question'),
          conversation_id: UUID.optional().describe('The conversation to continue'),
        })
        .strict(),
      annotations: { readOnlyHint: false, openWorldHint: true },
    },
    guarded(log, 'ask_agent', async (args, extra) => {
      const agentKey = args.agent_key ?? (agents.length === 1 ? agents[0]!.agent_key : undefined);
      if (!agentKey)
        throw new AppError(400, `agent_key is required: one of ${keys || '(none deployed)'}`, 'ValidationError');
      const turn = await deps.turns.prepare(caller.chat, {
        agent_key: agentKey,
        query: args.query,
        ...(args.conversation_id ? { conversation_id: args.conversation_id } : {}),
      });
      const progressToken = extra._meta?.progressToken;
      let progress = 0;
      const citations: unknown[] = [];
      const result = await deps.turns.run(turn, extra.signal, (event) => {
        if (event.type === 'chunk' && event.kind === 'citations') citations.push(...((event.citations as []) ?? []));
        if (progressToken === undefined || event.type !== 'agent_text_chunk' || !event.content) return;
        progress += 1;
        extra
          .sendNotification({
            method: 'notifications/progress',
            params: { progressToken, progress, message: String(event.content) },
          })
          .catch(() => undefined);
      });
      if (result.finish_reason === 'error')
        return { content: [{ type: 'text', text: result.agent_response_text || 'The agent failed' }], isError: true };
      return json({
        answer: result.agent_response_text,
        conversation_id: result.conversation_id,
        message_id: result.message_id,
        was_resolved: result.was_resolved,
        citations,
      });
    }),
  );

  server.registerTool(
    'list_support_queries',
    {
      title: 'List support queries',
      description:
        'Support queries the agents handled, newest first (status, priority, type, the agent, resolution), a page at a time.',
      inputSchema: z
        .object({
          status: z.enum(['open', 'in_progress', 'resolved', 'closed']).optional(),
          priority: z.enum(['low', 'medium', 'high', 'urgent']).optional(),
          agent_id: UUID.optional(),
          start_date: DATE.optional().describe('ISO 8601: created at or after'),
          end_date: DATE.optional().describe('ISO 8601: created at or before'),
          skip: z.number().int().min(0).max(1_000_000).default(0),
          limit: z.number().int().min(1).max(100).default(20),
        })
        .strict(),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    guarded(log, 'list_support_queries', async (args) => {
      if (caller.agentId && args.agent_id && args.agent_id.toLowerCase() !== caller.agentId)
        return json({ data: [], total: 0, skip: args.skip, limit: args.limit });
      const agentId = caller.agentId ?? args.agent_id;
      return json(
        await deps.supportQueries.list(caller.context, {
          skip: args.skip,
          limit: args.limit,
          ...(args.status ? { status: args.status } : {}),
          ...(args.priority ? { priority: args.priority } : {}),
          ...(agentId ? { agent_id: agentId } : {}),
          ...(args.start_date ? { start_date: args.start_date } : {}),
          ...(args.end_date ? { end_date: args.end_date } : {}),
        }),
      );
    }),
  );

  server.registerTool(
    'get_support_query',
    {
      title: 'Get a support query',
      description: 'One support query by id: the question, the answer, status, priority, the agent and notes.',
      inputSchema: z.object({ id: UUID.describe('The support query id') }).strict(),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    guarded(log, 'get_support_query', async (args) => {
      const query = await deps.supportQueries.get(caller.context, args.id);
      // A bound token's session sees its agent's queries only (another's is not found, as another company's).
      if (caller.agentId && (query as { agent_id?: string | null }).agent_id !== caller.agentId)
        throw notFound('Support query', args.id);
      return json(query);
    }),
  );
}
