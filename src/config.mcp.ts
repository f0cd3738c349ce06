/** The MCP server's settings (DESIGN §15), read from the environment src/config.ts is given. */
import { int, type Env } from './config.parse.js';

/** How many MCP sessions a process keeps, and for how long an idle one lives. */
export interface McpConfig {
  /** MCP_MAX_SESSIONS: sessions open in this process at once (a new one beyond: 503, retry later). */
  maxSessions: number;
  /** MCP_SESSIONS_PER_CREDENTIAL: sessions of one API key or chat token (its oldest gives way). */
  maxPerOwner: number;
  /** MCP_SESSION_IDLE_MINUTES: a session unused for this long ends (the client initializes again). */
  idleMs: number;
}

export function mcpConfig(env: Env): McpConfig {
  return {
    maxSessions: int(env, 'MCP_MAX_SESSIONS', 1000, 1, 1_000_000),
    maxPerOwner: int(env, 'MCP_SESSIONS_PER_CREDENTIAL', 20, 1, 10_000),
    idleMs: int(env, 'MCP_SESSION_IDLE_MINUTES', 30, 1, 24 * 60) * 60_000,
  };
}
