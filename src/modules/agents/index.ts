/**
 * The agents module's surface for the rest of the service: the service and routes the container
 * and the app mount, and the stored agent record, which chat, deployments, identity and the demo
 * seed read (or write) inside their own transactions.
 */
export { findAgent, insertAgent, type AgentRow } from './agents.repo.js';
export { BUILTIN_KB_MODEL, createAgentsService, toEscalation, type AgentsService } from './agents.service.js';
export { agentsRoutes } from './agents.routes.js';
export { toToolRules, type OfferedTools } from './agents.tool-rules.js';
export type { ToolRule, ToolRules } from './agents.schemas.js';
export { Agent, Region } from './agents.schemas.js';
