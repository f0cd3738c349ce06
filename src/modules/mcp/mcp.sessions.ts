/**
 * MCP sessions of this process: one SDK server and one Streamable HTTP transport per session
 * (`Mcp-Session-Id`), bound to the credential that opened it. Bounded (at most `maxSessions`, and
 * `maxPerOwner` per credential: a credential's oldest session gives way to its new one) and
 * expiring (a session idle for `idleMs` is closed; the client then gets 404 and initializes again,
 * as the transport specification says). `DELETE /mcp` closes one; `closeAll` closes them on shutdown.
 */
import { randomUUID } from 'node:crypto';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { McpCaller } from './mcp.caller.js';

export interface SessionLimits {
  maxSessions: number;
  maxPerOwner: number;
  idleMs: number;
  /** SSE keep-alive comments on open streams. */
  keepAliveMs: number;
}

export interface McpSession {
  id: string;
  owner: string;
  transport: WebStandardStreamableHTTPServerTransport;
  server: McpServer;
  lastUsed: number;
  /** Requests being answered: a session in use is never expired. */
  busy: number;
}

export class SessionsFullError extends Error {
  override readonly name = 'SessionsFullError';
}

export function createSessionStore(limits: SessionLimits, now: () => number = Date.now) {
  const sessions = new Map<string, McpSession>();

  async function close(session: McpSession) {
    sessions.delete(session.id);
    await session.server.close().catch(() => undefined);
  }

  /** Closes the sessions idle for longer than `idleMs` (open streams count as use). */
  function sweep() {
    const cutoff = now() - limits.idleMs;
    for (const session of sessions.values()) if (session.busy === 0 && session.lastUsed < cutoff) void close(session);
  }
  const timer = setInterval(sweep, Math.max(1000, Math.min(limits.idleMs / 2, 60_000)));
  timer.unref();

  return {
    get size() {
      return sessions.size;
    },

    /** The caller's session `id`, or undefined (unknown, expired, closed, or another credential's). */
    find(id: string, caller: McpCaller): McpSession | undefined {
      const session = sessions.get(id);
      if (!session || session.owner !== caller.owner) return undefined;
      if (session.busy === 0 && session.lastUsed < now() - limits.idleMs) {
        void close(session);
        return undefined;
      }
      return session;
    },

    /**
     * A new session's transport and server (the session is kept once its initialize is answered);
     * throws SessionsFullError when the process holds `maxSessions`.
     */
    async open(caller: McpCaller, build: () => Promise<McpServer>): Promise<McpSession> {
      sweep();
      const mine = [...sessions.values()].filter((session) => session.owner === caller.owner);
      if (mine.length >= limits.maxPerOwner) {
        const oldest = mine.reduce((a, b) => (a.lastUsed <= b.lastUsed ? a : b));
        await close(oldest);
      }
      if (sessions.size >= limits.maxSessions)
        throw new SessionsFullError('Too many MCP sessions are open; retry later');
      const server = await build();
      const session: McpSession = {
        id: '',
        owner: caller.owner,
        server,
        lastUsed: now(),
        busy: 0,
        transport: new WebStandardStreamableHTTPServerTransport({
          sessionIdGenerator: randomUUID,
          keepAliveMs: limits.keepAliveMs,
          onsessioninitialized: (id) => {
            session.id = id;
            sessions.set(id, session);
          },
          onsessionclosed: (id) => {
            sessions.delete(id);
          },
        }),
      };
      session.transport.onclose = () => {
        if (session.id) sessions.delete(session.id);
      };
      await server.connect(session.transport);
      return session;
    },

    /** Marks a request on the session begun; the returned function marks it done. */
    use(session: McpSession): () => void {
      session.busy += 1;
      session.lastUsed = now();
      let done = false;
      return () => {
        if (done) return;
        done = true;
        session.busy -= 1;
        session.lastUsed = now();
      };
    },

    close,

    async closeAll() {
      clearInterval(timer);
      await Promise.all([...sessions.values()].map(close));
    },
  };
}

export type SessionStore = ReturnType<typeof createSessionStore>;
