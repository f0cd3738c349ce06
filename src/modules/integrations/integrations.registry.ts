/**
 * The registry of connectors: the single source of the integration types (`GET
 * /integrations/types`), of config validation (each kind's schema, unknown keys named), of which
 * keys are secret, and of the tools an agent gets. Built once from the definitions the
 * container passes in (the adapters under src/adapters/connectors/).
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { ConnectorDefinition, ConnectorTool, DiscoveredTool } from '../../ports/connectors.js';
import type { IntegrationType } from './integrations.schemas.js';

// ajv-formats is CommonJS with a default export.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

/** A config that does not fit its kind: the key (or `config` itself) and what is wrong. */
export interface ConfigProblem {
  /** `config`, or `config.<key>` (nested keys dotted). */
  field: string;
  problem: string;
}

const FORMAT_WORDS: Record<string, string> = {
  email: 'an e-mail address',
  uri: 'a URL',
  uuid: 'a UUID',
};

function fieldOf(error: ErrorObject, extra?: string): string {
  const path = error.instancePath.replace(/^\//, '').replace(/\//g, '.');
  return ['config', path, extra].filter(Boolean).join('.');
}

function describe(error: ErrorObject, type: string): ConfigProblem {
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return { field: fieldOf(error, String(params.missingProperty)), problem: `is required for type ${type}` };
    case 'type':
      return { field: fieldOf(error), problem: `must be ${String(params.type)}` };
    case 'maxLength':
      return { field: fieldOf(error), problem: `must be at most ${String(params.limit)} characters` };
    case 'minLength':
      return { field: fieldOf(error), problem: `must be at least ${String(params.limit)} character(s)` };
    case 'format':
      return {
        field: fieldOf(error),
        problem: `must be ${FORMAT_WORDS[String(params.format)] ?? String(params.format)}`,
      };
    case 'pattern':
      return {
        field: fieldOf(error),
        problem: `has an invalid format${error.parentSchema?.description ? ` (${String(error.parentSchema.description)})` : ''}`,
      };
    case 'enum':
    case 'const':
      return {
        field: fieldOf(error),
        problem: `must be ${
          params.allowedValues
            ? `one of: ${(params.allowedValues as unknown[]).join(', ')}`
            : String(params.allowedValue)
        }`,
      };
    case 'maxProperties':
    case 'maxItems':
      return { field: fieldOf(error), problem: `must have at most ${String(params.limit)} entries` };
    default:
      return { field: fieldOf(error), problem: error.message ?? 'is invalid' };
  }
}

export interface ConnectorRegistry {
  /** The listing of `GET /integrations/types`: every listed kind. */
  types(): IntegrationType[];
  /** Every type value that can be created (listed or not). */
  typeNames(): string[];
  /** The definition of `type`, or undefined. */
  get(type: string): ConnectorDefinition | undefined;
  /** The config's problems against its kind (unknown keys first), empty when it is valid. */
  validate(type: string, config: Record<string, unknown>): ConfigProblem[];
  /** The tools of an integration of this kind and config (none for an unknown kind). */
  tools(type: string, config: Record<string, unknown>, discovered?: readonly DiscoveredTool[] | null): ConnectorTool[];
}

export function createConnectorRegistry(definitions: readonly ConnectorDefinition[]): ConnectorRegistry {
  const ajv = new Ajv({ allErrors: true, strict: false, coerceTypes: false, useDefaults: false });
  addFormats(ajv, ['email', 'uri', 'uuid']);
  const byType = new Map<string, { definition: ConnectorDefinition; check: ValidateFunction }>();
  for (const definition of definitions) {
    if (byType.has(definition.type)) throw new Error(`Duplicate connector type ${definition.type}`);
    byType.set(definition.type, { definition, check: ajv.compile(definition.config) });
  }

  return {
    types: () =>
      definitions
        .filter((definition) => definition.listed)
        .map(({ type, name, description }) => ({ type, name, description })),
    typeNames: () => [...byType.keys()],
    get: (type) => byType.get(type)?.definition,
    validate(type, config) {
      const entry = byType.get(type);
      if (!entry) return [{ field: 'type', problem: `unknown integration type '${type}'` }];
      if (entry.check(config)) {
        const refined = entry.definition.refine?.(config);
        return refined ? [{ field: `config.${refined.key}`, problem: refined.problem }] : [];
      }
      const errors = entry.check.errors ?? [];
      const unknown = errors.filter((error) => error.keyword === 'additionalProperties');
      if (unknown.length) {
        const byObject = new Map<string, string[]>();
        for (const error of unknown) {
          const where = fieldOf(error);
          const key = String((error.params as { additionalProperty: string }).additionalProperty);
          byObject.set(where, [...(byObject.get(where) ?? []), key]);
        }
        const [where, keys] = [...byObject.entries()][0]!;
        const allowed =
          where === 'config' ? ` (allowed: ${Object.keys(entry.definition.config.properties).join(', ')})` : '';
        return [{ field: where, problem: `unknown key(s) for type ${type}: ${keys.join(', ')}${allowed}` }];
      }
      return errors.map((error) => describe(error, type));
    },
    tools(type, config, discovered) {
      const entry = byType.get(type);
      return entry ? entry.definition.tools(config, discovered ?? null) : [];
    },
  };
}
