/**
 * The MCP server (DESIGN §15): a company's knowledge, agents and support queries to any MCP client
 * over the Streamable HTTP transport of the official SDK. One SDK server per session, built for the
 * session's caller (tools and resources scoped to its company, or a bound token's agent).
 */
export { mcpMetadataRoutes, mcpRoutes, METADATA_PATH, type McpRouteOptions } from './mcp.routes.js';
export type { SessionLimits } from './mcp.sessions.js';
export { createMcpModule, type McpModule } from './mcp.module.js';
