/** Shared pieces of the connector tests: a call's signal, the failure a call must end in, a tool by name. */
import { expect } from 'vitest';
import { ConnectorError, type ConnectorDefinition } from '../../src/ports/connectors.js';

/** A generous signal for one vendor call (the connector's own time limit is what a test sets). */
export const signal = () => AbortSignal.timeout(30_000);

/** Resolves with the ConnectorError `promise` rejects with; fails the test when it resolves. */
export async function failure(promise: Promise<unknown>): Promise<ConnectorError> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ConnectorError);
  return error as ConnectorError;
}

/** The tool `name` of a connector with `config`; throws when the connector does not offer it. */
export function tool<C>(definition: ConnectorDefinition<C>, config: C, name: string) {
  const found = definition.tools(config).find((candidate) => candidate.name === name);
  if (!found) throw new Error(`no tool ${name}`);
  return found;
}
