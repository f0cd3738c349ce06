/**
 * Integrations of a company (the integrations family, DESIGN §10): create, read, update, delete,
 * the kinds' listing and the live check. Members read; developers and above write and test.
 * Config is validated by the registry against its kind; secrets are sealed before they are
 * stored and masked in every answer; nothing here logs a config.
 */
import { randomUUID } from 'node:crypto';
import type { Db } from '../../db/database.js';
import type { CompanyContext } from '../../http/caller.js';
import { AppErrors } from '../../http/errors.js';
import { hasRole } from '../../lib/roles.js';
import { ConnectorError } from '../../ports/connectors.js';
import type { ConnectorRegistry } from './integrations.registry.js';
import * as repo from './integrations.repo.js';
import type {
  CreateIntegrationBody,
  Integration,
  IntegrationTestResult,
  IntegrationType,
  UpdateIntegrationBody,
} from './integrations.schemas.js';
import {
  findMasked,
  scrubSecrets,
  mergeConfig,
  secretContext,
  secretMapOf,
  type IntegrationSecrets,
} from './integrations.secrets.js';
import { isSealed } from '../../lib/secret-box.js';

/** The largest config stored, as JSON text (a service-account key is about 2.5 KiB). */
const MAX_CONFIG_BYTES = 64 * 1024;

export interface IntegrationsDeps {
  db: Db;
  registry: ConnectorRegistry;
  secrets: IntegrationSecrets;
  /** INTEGRATION_TIMEOUT_MS: the live check is bounded by a little more than one vendor call. */
  timeoutMs: number;
  log: { info(object: object, message: string): void; warn(object: object, message: string): void };
  /** Monotonic milliseconds, for latency_ms. */
  now?: () => number;
  /** Called once an integration's config, state or existence may have changed (this instance's caches; others hear it from the database, migration 0245). */
  changed?: () => void;
}

/** The first field of `value` (dotted path) holding a NUL character, or undefined. */
export function findNul(value: unknown, path: string): string | undefined {
  if (typeof value === 'string') return value.includes('\u0000') ? path : undefined;
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) {
      const found = findNul(item, `${path}.${index}`);
      if (found) return found;
    }
  } else if (value && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      if (key.includes('\u0000')) return `${path}.${key.split('\u0000').join('\\0')}`;
      const found = findNul(item, `${path}.${key}`);
      if (found) return found;
    }
  }
  return undefined;
}

/** The first string of `value` (dotted path) that is a URL carrying credentials (`user:pass@`), or undefined. */
export function findUrlCredentials(value: unknown, path: string): string | undefined {
  if (typeof value === 'string') {
    return /^[a-z][a-z0-9+.-]*:\/\/[^/?#\s]*@/i.test(value.trim()) ? path : undefined;
  }
  if (value && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      const found = findUrlCredentials(item, `${path}.${key}`);
      if (found) return found;
    }
  }
  return undefined;
}

function requireDeveloper(context: CompanyContext, what: string) {
  if (!hasRole(context.role, 'developer')) {
    throw AppErrors.forbidden(`${what} needs the developer role; your role is ${context.role}`);
  }
}

export function createIntegrationsService(deps: IntegrationsDeps) {
  const { db, registry, secrets } = deps;
  const now = deps.now ?? (() => performance.now());

  function definitionOf(type: string) {
    const definition = registry.get(type);
    if (!definition) {
      throw AppErrors.validation(
        `Invalid field 'type': unknown integration type '${type}'; one of: ${registry.typeNames().join(', ')}`,
      );
    }
    return definition;
  }

  /** Checks a config against its kind; throws the 400 naming the first problem. */
  function checkConfig(type: string, config: Record<string, unknown>) {
    const withCredentials = findUrlCredentials(config, 'config');
    if (withCredentials) {
      throw AppErrors.validation(
        `Invalid field '${withCredentials}': must not carry credentials (user:password@); put them in the integration's secret fields`,
      );
    }
    const [problem] = registry.validate(type, config);
    if (problem) throw AppErrors.validation(`Invalid field '${problem.field}': ${problem.problem}`);
    if (Buffer.byteLength(JSON.stringify(config)) > MAX_CONFIG_BYTES) {
      throw AppErrors.validation(`Invalid field 'config': larger than ${MAX_CONFIG_BYTES / 1024} KiB`);
    }
  }

  function checkText(body: object) {
    const field = findNul(body, '');
    if (field) throw AppErrors.validation(`Invalid field '${field.slice(1)}': must not contain NUL characters`);
  }

  async function checkAgent(context: CompanyContext, agentId: string | null | undefined) {
    if (agentId && !(await repo.agentExists(db, context.companyId, agentId))) {
      throw AppErrors.validation(`Invalid field 'agent_id': no agent ${agentId} in your company`);
    }
  }

  const where = (row: { company_id: string; id: string }) => (key: string) =>
    secretContext(row.company_id, row.id, key);

  function clearConfig(row: repo.IntegrationRow): Record<string, unknown> {
    const keys = registry.get(row.type)?.secretKeys ?? [];
    return secrets.open(row.config, keys, where(row));
  }

  function toIntegration(row: repo.IntegrationRow): Integration {
    const keys = registry.get(row.type)?.secretKeys ?? [];
    return {
      id: row.id,
      name: row.name,
      type: row.type,
      config: secrets.mask(clearConfig(row), keys),
      is_active: row.is_active,
      visibility: row.visibility,
      company_id: row.company_id,
      agent_id: row.agent_id,
      created_at: row.created_at.toISOString(),
      updated_at: row.updated_at.toISOString(),
    };
  }

  async function liveCheck(row: repo.IntegrationRow): Promise<IntegrationTestResult> {
    const id = row.id;
    const definition = definitionOf(row.type);
    const config = clearConfig(row);
    const started = now();
    const latency = () => Math.max(0, Math.round(now() - started));
    const [problem] = registry.validate(row.type, config);
    let result: IntegrationTestResult;
    if (problem) {
      result = {
        ok: false,
        detail: `The stored config is not valid: ${problem.field} ${problem.problem}`,
        latency_ms: 0,
      };
    } else {
      try {
        const outcome = await definition.test({ config, signal: AbortSignal.timeout(deps.timeoutMs * 2 + 1000) });
        // A server's own list of tools (MCP) is cached: agents' turns offer it without asking the server.
        if (outcome.tools) await repo.saveDiscoveredTools(db, row.company_id, id, outcome.tools);
        result = {
          ok: true,
          detail: scrubSecrets(outcome.detail, config, definition.secretKeys),
          latency_ms: latency(),
        };
      } catch (error) {
        if (!(error instanceof ConnectorError)) {
          deps.log.warn(
            { integration_id: id, type: row.type, error: (error as Error).name },
            'integration test failed unexpectedly',
          );
        }
        const words =
          error instanceof ConnectorError ? error.message : `${definition.name}: the check failed unexpectedly`;
        result = { ok: false, detail: scrubSecrets(words, config, definition.secretKeys), latency_ms: latency() };
      }
    }
    deps.log.info(
      { integration_id: id, type: row.type, ok: result.ok, latency_ms: result.latency_ms },
      'integration tested',
    );
    return result;
  }

  async function find(context: CompanyContext, id: string) {
    const row = await repo.findIntegration(db, context.companyId, id);
    if (!row) throw AppErrors.notFound('Integration', id);
    return row;
  }

  return {
    types(): IntegrationType[] {
      return registry.types();
    },

    async list(context: CompanyContext, skip = 0, limit = 100): Promise<Integration[]> {
      return (await repo.listIntegrations(db, context.companyId, skip, limit)).map(toIntegration);
    },

    async get(context: CompanyContext, id: string): Promise<Integration> {
      return toIntegration(await find(context, id));
    },

    async create(context: CompanyContext, body: CreateIntegrationBody): Promise<Integration> {
      requireDeveloper(context, 'Creating integrations');
      checkText(body);
      const definition = definitionOf(body.type);
      const config: Record<string, unknown> = { ...(body.config ?? {}) };
      const masked = findMasked(config, definition.secretKeys);
      if (masked)
        throw AppErrors.validation(`Invalid field 'config.${masked}': is a masked value; send the secret itself`);
      checkConfig(body.type, config);
      await checkAgent(context, body.agent_id);
      const id = randomUUID();
      const row = await repo.insertIntegration(db, {
        id,
        company_id: context.companyId,
        name: body.name,
        type: body.type,
        config: secrets.seal(config, definition.secretKeys, where({ company_id: context.companyId, id })),
        is_active: body.is_active ?? true,
        visibility: body.visibility ?? 'private',
        agent_id: body.agent_id ?? null,
        created_by: context.userId,
      });
      return toIntegration(row);
    },

    async update(context: CompanyContext, id: string, body: UpdateIntegrationBody): Promise<Integration> {
      requireDeveloper(context, 'Updating integrations');
      checkText(body);
      const current = await find(context, id);
      if (body.type !== undefined && body.type !== current.type) {
        throw AppErrors.validation(
          `Invalid field 'type': the type of an integration cannot change (it is ${current.type}); create a new integration`,
        );
      }
      const definition = definitionOf(current.type);
      let config: Record<string, unknown> | undefined;
      if (body.config !== undefined) {
        const merged = mergeConfig(clearConfig(current), body.config, definition.secretKeys);
        if ('problem' in merged) throw AppErrors.validation(`Invalid field 'config.${merged.key}': ${merged.problem}`);
        checkConfig(current.type, merged.config);
        config = secrets.seal(merged.config, definition.secretKeys, where(current));
      }
      await checkAgent(context, body.agent_id);
      const row = await repo
        .updateIntegration(db, context.companyId, id, {
          name: body.name,
          config,
          is_active: body.is_active,
          visibility: body.visibility,
          agent_id: body.agent_id,
        })
        .finally(() => deps.changed?.());
      if (!row) throw AppErrors.notFound('Integration', id);
      return toIntegration(row);
    },

    async remove(context: CompanyContext, id: string): Promise<void> {
      requireDeveloper(context, 'Deleting integrations');
      const deleted = await repo.deleteIntegration(db, context.companyId, id).finally(() => deps.changed?.());
      if (!deleted) throw AppErrors.notFound('Integration', id);
    },

    /** The live check: one cheap authenticated vendor call. A failure is `ok: false`, never an HTTP error. */
    async test(context: CompanyContext, id: string): Promise<IntegrationTestResult> {
      requireDeveloper(context, 'Testing integrations');
      const result = await liveCheck(await find(context, id));
      return result;
    },

    /**
     * The same live check for another module (a deployment's roll-out), without a caller's role:
     * undefined when the company has no such integration.
     */
    async check(companyId: string, id: string): Promise<IntegrationTestResult | undefined> {
      const row = await repo.findIntegration(db, companyId, id);
      return row ? liveCheck(row) : undefined;
    },

    /**
     * Start-up, after the key check: values of secret maps stored in clear before they were
     * secrets (custom_api `headers` written before they were sealed) are sealed now. A row
     * changed meanwhile is left to its writer (the update seals it). Returns how many were sealed.
     */
    async sealClearSecrets(): Promise<number> {
      let sealed = 0;
      for (const type of registry.typeNames()) {
        const keys = registry.get(type)?.secretKeys ?? [];
        for (const map of keys.map(secretMapOf)) {
          if (!map) continue;
          let after = '00000000-0000-0000-0000-000000000000';
          for (;;) {
            const rows = await repo.integrationsWithKey(db, type, map, after, 200);
            for (const row of rows) {
              const entries = Object.values((row.config[map] ?? {}) as Record<string, unknown>);
              if (entries.every((value) => typeof value !== 'string' || isSealed(value))) continue;
              const config = secrets.seal(secrets.open(row.config, keys, where(row)), keys, where(row));
              if (await repo.replaceConfigIf(db, row.id, row.config, config)) sealed += 1;
            }
            if (rows.length < 200) break;
            after = rows.at(-1)!.id;
          }
        }
      }
      if (sealed) {
        deps.changed?.();
        deps.log.info({ integrations: sealed }, 'integration secrets stored in clear were sealed');
      }
      return sealed;
    },

    /**
     * Start-up: the stored check value must open with the key in force (stored on the first
     * start). Throws a clear error otherwise, so a wrong key never reads secrets as garbage.
     */
    /** Kind, state and the config keys holding a value (a deployment's channel roll-out). */
    async facts(companyId: string, id: string) {
      const row = await repo.findIntegration(db, companyId, id);
      if (!row) return undefined;
      const config = clearConfig(row);
      const keys = Object.keys(config).filter((key) => config[key] !== undefined && config[key] !== null);
      return { name: row.name, type: row.type, is_active: row.is_active, keys };
    },

    /**
     * An integration's config with its secrets in clear, for a channel that answers through it
     * (verifying a vendor's signature, sending the reply). Never returned to a caller or logged.
     */
    async openConfig(companyId: string, id: string) {
      const row = await repo.findIntegration(db, companyId, id);
      if (!row) return undefined;
      return { id: row.id, name: row.name, type: row.type, is_active: row.is_active, config: clearConfig(row) };
    },

    async verifySecretKey(): Promise<void> {
      let sealed = await repo.findKeyCheck(db);
      if (sealed === undefined) {
        await repo.insertKeyCheck(db, secrets.sealKeyCheck());
        sealed = await repo.findKeyCheck(db);
      }
      if (sealed === undefined || !secrets.keyCheckOpens(sealed)) {
        throw new Error(
          'SECRET_KEY does not match the key the stored integration secrets were encrypted with ' +
            '(table secret_key_check). Start with the original key (SECRET_KEY, or the DATA_DIR/secret.key ' +
            'file of the first start); with another key the stored secrets cannot be read.',
        );
      }
    },
  };
}

export type IntegrationsService = ReturnType<typeof createIntegrationsService>;
