/**
 * The integrations module's surface: createIntegrationsModule (service, routes, the key check
 * run at start-up, the registry other modules ask for tools) and the schemas the app registers.
 */
import type { Db } from '../../db/database.js';
import type { SecretBox } from '../../lib/secret-box.js';
import type { ConnectorDefinition } from '../../ports/connectors.js';
import { createAgentTools } from './integrations.agent-tools.js';
import { createConnectorRegistry } from './integrations.registry.js';
import { Integration, IntegrationType } from './integrations.schemas.js';
import { createIntegrationSecrets } from './integrations.secrets.js';
import { createIntegrationsService, type IntegrationsDeps } from './integrations.service.js';

export { integrationsRoutes } from './integrations.routes.js';
export type { ConnectorRegistry } from './integrations.registry.js';
export type { AgentToolsService } from './integrations.agent-tools.js';
export type { IntegrationsService } from './integrations.service.js';

/** Schemas with an $id that routes reference (the app adds them to the OpenAPI components). */
export const INTEGRATIONS_SCHEMAS = [Integration, IntegrationType];

export function createIntegrationsModule(deps: {
  db: Db;
  box: SecretBox;
  connectors: readonly ConnectorDefinition[];
  timeoutMs: number;
  log: IntegrationsDeps['log'];
  changed?: IntegrationsDeps['changed'];
}) {
  const registry = createConnectorRegistry(deps.connectors);
  const secrets = createIntegrationSecrets(deps.box);
  const service = createIntegrationsService({
    db: deps.db,
    registry,
    secrets,
    timeoutMs: deps.timeoutMs,
    log: deps.log,
    changed: deps.changed,
  });
  /** The tools of an agent's integrations and their calls (the chat runtime's AgentTools). */
  const agentTools = createAgentTools({ db: deps.db, registry, secrets, timeoutMs: deps.timeoutMs, log: deps.log });
  return Object.assign(service, { registry, agentTools });
}

export type IntegrationsModule = ReturnType<typeof createIntegrationsModule>;
