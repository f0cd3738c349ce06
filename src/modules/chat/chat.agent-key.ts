/** `agent:<agent uuid>:<channel>:<region>`, the address of a deployed agent in chat requests. */
import { AppErrors } from '../../http/errors.js';

export interface AgentKey {
  agentId: string;
  channel: string;
  region: string;
}

const AGENT_KEY =
  /^agent:([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}):([a-z0-9][a-z0-9_-]{0,49}):([a-z0-9][a-z0-9_-]{0,49})$/i;

export function parseAgentKey(value: string): AgentKey {
  const match = AGENT_KEY.exec(value.trim());
  if (!match) {
    throw AppErrors.badRequest(
      `Invalid agent_key "${value.slice(0, 120)}": expected agent:<agent uuid>:<channel>:<region>, e.g. agent:3f0c…:web:us-east`,
    );
  }
  return { agentId: match[1]!.toLowerCase(), channel: match[2]!.toLowerCase(), region: match[3]!.toLowerCase() };
}
