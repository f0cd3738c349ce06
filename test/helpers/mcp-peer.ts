/**
 * An MCP server built with the official SDK (McpServer over its Node Streamable HTTP transport,
 * stateless: a server per request), as a company's integration would reach one: a bearer it
 * requires, a tool that answers, one that fails, one that is slow and one with a huge answer; and
 * tools of names no rule knows (`order_status`, `open_case`), for an agent's tool rules.
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

export interface McpPeer {
  url: string;
  token: string;
  /** Tool calls received, in order. */
  calls: { name: string; args: unknown; authorization: string | undefined }[];
  close(): Promise<void>;
}

export const HUGE_CHARS = 50_000;

function build(peer: McpPeer, request: IncomingMessage, slowMs: number): McpServer {
  const server = new McpServer({ name: 'warehouse', version: '2.1.0' });
  const record = (name: string, args: unknown) =>
    peer.calls.push({ name, args, authorization: request.headers.authorization });
  server.registerTool(
    'lookup_order',
    {
      description: 'Looks an order up by its number: status and tracking.',
      inputSchema: { order: z.string().describe('The order number') },
    },
    async ({ order }) => {
      record('lookup_order', { order });
      return { content: [{ type: 'text', text: `Order ${order}: shipped, tracking 1Z999AA10123456784` }] };
    },
  );
  server.registerTool(
    'order_status',
    {
      description: 'The status of an order by its reference.',
      inputSchema: {
        reference: z.string().describe('The order reference'),
        channel: z.string().optional().describe('Where it was ordered'),
      },
    },
    async (args) => {
      record('order_status', args);
      return { content: [{ type: 'text', text: `Order ${args.reference} is out for delivery today` }] };
    },
  );
  server.registerTool(
    'open_case',
    {
      description: 'Opens a support case.',
      inputSchema: { title: z.string(), body: z.string() },
    },
    async (args) => {
      record('open_case', args);
      return { content: [{ type: 'text', text: 'case 5521 opened' }] };
    },
  );
  server.registerTool('explode', { description: 'Always fails.', inputSchema: {} }, async () => {
    record('explode', {});
    return { content: [{ type: 'text', text: 'the warehouse database is down' }], isError: true };
  });
  server.registerTool('slow', { description: 'Answers after a long wait.', inputSchema: {} }, async () => {
    record('slow', {});
    await new Promise((resolve) => setTimeout(resolve, slowMs));
    return { content: [{ type: 'text', text: 'finally' }] };
  });
  server.registerTool('huge', { description: 'A very long answer.', inputSchema: {} }, async () => {
    record('huge', {});
    return { content: [{ type: 'text', text: 'x'.repeat(HUGE_CHARS) }] };
  });
  return server;
}

export async function startMcpPeer(options: { slowMs?: number } = {}): Promise<McpPeer> {
  const peer: McpPeer = {
    url: '',
    token: `peer-${Math.random().toString(36).slice(2)}`,
    calls: [],
    close: async () => {},
  };
  const http = createServer((request, response) => {
    if (request.headers.authorization !== `Bearer ${peer.token}`) {
      response.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"unauthorized"}');
      return;
    }
    const server = build(peer, request, options.slowMs ?? 5000);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    response.on('close', () => {
      void transport.close();
      void server.close();
    });
    server
      .connect(transport)
      .then(() => transport.handleRequest(request, response))
      .catch(() => response.headersSent || response.writeHead(500).end());
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  peer.url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
  peer.close = () =>
    new Promise((resolve) => {
      http.closeAllConnections();
      http.close(() => resolve());
    });
  return peer;
}
