/**
 * Any MCP server as an integration (`type: mcp`, DESIGN §15): the official SDK's client over the
 * Streamable HTTP transport, every request through the connectors' guarded fetch (SSRF guard, time
 * limit, size cap, no redirects). The live check lists the server's tools (cached with the
 * integration); an agent gets those the config allows (`allowed_tools`, none given: all); a call
 * opens a session, calls the tool and ends the session. What comes back is data: text only, cut
 * to MAX_OUTPUT_CHARS, never followed.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { Type } from '@sinclair/typebox';
import {
  ConnectorError,
  type ConnectorDefinition,
  type ConnectorTool,
  type DiscoveredTool,
} from '../../../ports/connectors.js';
import { HttpUrl } from '../fields.js';
import type { ConnectorHttp } from '../http.js';

interface McpConfig {
  url: string;
  headers?: Record<string, string>;
  allowed_tools?: string[];
}

const VENDOR = 'MCP server';
/** The most of a tool's answer handed to the model. */
export const MAX_OUTPUT_CHARS = 8000;
/** Tools cached per integration, and the largest input schema kept. */
const MAX_TOOLS = 64;
const MAX_SCHEMA_CHARS = 20_000;

const HEADER_NAME = "^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,100}$";

/** A tool as cached: its schema plain JSON (no `$schema`: the validator speaks one draft), bounded. */
function discovered(tool: { name: string; description?: string; inputSchema: Record<string, unknown> }) {
  const { $schema: _dialect, ...schema } = tool.inputSchema;
  const text = JSON.stringify(schema);
  return {
    name: tool.name.slice(0, 128),
    description: (tool.description ?? '').slice(0, 1000),
    inputSchema: text.length > MAX_SCHEMA_CHARS ? { type: 'object' } : schema,
  };
}

/** The answer's text (images, audio and binary resources named, not passed on), cut to MAX_OUTPUT_CHARS. */
export function outputText(result: CallToolResult): { text: string; truncated: boolean } {
  const parts = (result.content ?? []).map((part) => {
    if (part.type === 'text') return part.text;
    if (part.type === 'resource')
      return 'text' in part.resource ? String(part.resource.text) : `[${part.type} omitted]`;
    if (part.type === 'resource_link') return `[resource ${part.uri}]`;
    return `[${part.type} omitted]`;
  });
  let text = parts.join('\n');
  if (!text && result.structuredContent) text = JSON.stringify(result.structuredContent);
  return text.length > MAX_OUTPUT_CHARS
    ? { text: `${text.slice(0, MAX_OUTPUT_CHARS)}…`, truncated: true }
    : { text, truncated: false };
}

/** An SDK or transport failure in the connectors' terms (the guarded fetch's own errors kept). */
function connectorError(error: unknown, signal: AbortSignal): ConnectorError {
  if (error instanceof ConnectorError) return error;
  const cause = (error as { cause?: unknown })?.cause;
  if (cause instanceof ConnectorError) return cause;
  if (signal.aborted) return new ConnectorError(VENDOR, 'no answer in time', { retryable: true });
  const message = error instanceof Error ? error.message : String(error);
  const status = /HTTP (\d{3})|\((\d{3})\)|status (\d{3})/.exec(message);
  const code = Number(status?.[1] ?? status?.[2] ?? status?.[3]);
  if (code === 401 || code === 403)
    return new ConnectorError(VENDOR, `credentials were refused (HTTP ${code})`, { status: code, retryable: false });
  return new ConnectorError(VENDOR, message.replace(/\s+/g, ' ').slice(0, 300), {
    retryable: code >= 500 || code === 429 || Number.isNaN(code),
    ...(code ? { status: code } : {}),
  });
}

export function mcpConnector(http: ConnectorHttp): ConnectorDefinition<McpConfig> {
  const fetch = http.fetchFor(VENDOR);

  /** Runs `work` in a new session with the server, ended afterwards whatever happens. */
  async function session<T>(config: McpConfig, signal: AbortSignal, work: (client: Client) => Promise<T>): Promise<T> {
    const transport = new StreamableHTTPClientTransport(new URL(config.url), {
      fetch: (input, init) =>
        fetch(input, { ...init, signal: init?.signal ? AbortSignal.any([init.signal, signal]) : signal }),
      requestInit: { headers: { ...config.headers } },
    });
    const client = new Client({ name: 'switchboard', version: '0.1.0' });
    try {
      await client.connect(transport, { signal });
      return await work(client);
    } catch (error) {
      throw connectorError(error, signal);
    } finally {
      await transport.terminateSession().catch(() => undefined);
      await client.close().catch(() => undefined);
    }
  }

  function toolOf(tool: DiscoveredTool): ConnectorTool<McpConfig> {
    return {
      name: tool.name,
      description: tool.description || `The server's ${tool.name} tool`,
      input: Type.Unsafe<Record<string, unknown>>(tool.inputSchema),
      notification: 'api_call',
      async run(input, context) {
        const result = (await session(context.config, context.signal, (client) =>
          client.callTool({ name: tool.name, arguments: input }, undefined, { signal: context.signal }),
        )) as CallToolResult;
        const output = outputText(result);
        if (result.isError)
          throw new ConnectorError(VENDOR, `${tool.name} failed: ${output.text.slice(0, 300)}`, { retryable: false });
        return {
          // The answer's first line says what was found (the built-in responder quotes it).
          summary: `${output.text.split('\n')[0]!.slice(0, 200)}${output.truncated ? ' (truncated)' : ''}`,
          data: { content: output.text, truncated: output.truncated },
        };
      },
    };
  }

  return {
    type: 'mcp',
    name: 'MCP server',
    description: "Any Model Context Protocol server (Streamable HTTP): its tools become the agent's.",
    listed: true,
    secretKeys: ['headers.*'],
    config: Type.Object(
      {
        url: HttpUrl('The MCP endpoint (Streamable HTTP), e.g. https://mcp.example.com/mcp.'),
        headers: Type.Optional(
          Type.Record(
            Type.String({ pattern: HEADER_NAME }),
            Type.String({ maxLength: 4096, pattern: '^[^\\r\\n]*$' }),
            {
              maxProperties: 20,
              description:
                'Request headers (name → value), e.g. Authorization. Their values are secrets (stored encrypted, shown masked).',
            },
          ),
        ),
        allowed_tools: Type.Optional(
          Type.Array(Type.String({ minLength: 1, maxLength: 128 }), {
            maxItems: 64,
            uniqueItems: true,
            description: "The server's tools an agent may call (omitted: all it lists).",
          }),
        ),
      },
      { additionalProperties: false },
    ),
    async test(context) {
      return session(context.config, context.signal, async (client) => {
        const tools: DiscoveredTool[] = [];
        let cursor: string | undefined;
        do {
          const page = await client.listTools(cursor ? { cursor } : {}, { signal: context.signal });
          tools.push(...page.tools.map(discovered));
          cursor = page.nextCursor;
        } while (cursor && tools.length < MAX_TOOLS);
        const server = client.getServerVersion();
        const names = tools.slice(0, MAX_TOOLS).map((tool) => tool.name);
        const shown = names.slice(0, 10).join(', ') + (names.length > 10 ? ', …' : '');
        return {
          detail: `Connected to ${server?.name ?? 'the MCP server'}: ${names.length} tool${names.length === 1 ? '' : 's'}${names.length ? ` (${shown})` : ''}`,
          tools: tools.slice(0, MAX_TOOLS),
        };
      });
    },
    tools(config, cached) {
      const allowed = config.allowed_tools ? new Set(config.allowed_tools) : null;
      return (cached ?? []).filter((tool) => !allowed || allowed.has(tool.name)).map(toolOf);
    },
  };
}
