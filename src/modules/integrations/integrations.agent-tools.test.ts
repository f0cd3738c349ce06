import { randomBytes } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import { describe, expect, it, vi } from 'vitest';
import type { Db } from '../../db/database.js';
import { createSecretBox } from '../../lib/secret-box.js';
import type { ConnectorDefinition } from '../../ports/connectors.js';
import { createAgentTools } from './integrations.agent-tools.js';
import { createConnectorRegistry } from './integrations.registry.js';
import { createIntegrationSecrets } from './integrations.secrets.js';

const row = {
  id: '6f1c2f4e-0000-4000-8000-000000000001',
  company_id: '6f1c2f4e-0000-4000-8000-000000000002',
  type: 'waiting',
  config: {},
  is_active: true,
  discovered_tools: null,
};

/** The one query `run` makes (the integration's row), answered with `row`. */
function dbAnswering(answer: object): Db {
  const query = { select: () => query, where: () => query, executeTakeFirst: () => Promise.resolve(answer) };
  return { selectFrom: () => query } as unknown as Db;
}

/** A kind whose one tool answers only when its signal aborts (with the signal's reason). */
const waiting: ConnectorDefinition = {
  type: 'waiting',
  name: 'Waiting',
  description: 'A vendor that never answers.',
  listed: false,
  config: Type.Object({}),
  secretKeys: [],
  test: () => Promise.resolve({ detail: 'ok' }),
  tools: () => [
    {
      name: 'wait',
      description: 'Waits.',
      input: Type.Object({}),
      notification: 'api_call',
      run: (_input, { signal }) =>
        new Promise((_resolve, reject) =>
          signal.addEventListener('abort', () => reject(signal.reason as Error), { once: true }),
        ),
    },
  ],
};

function tools(timeoutMs: number) {
  const log = { warn: vi.fn() };
  const agentTools = createAgentTools({
    db: dbAnswering(row),
    registry: createConnectorRegistry([waiting]),
    secrets: createIntegrationSecrets(createSecretBox(randomBytes(32))),
    timeoutMs,
    log,
  });
  const call = (signal: AbortSignal) =>
    agentTools.run(row.company_id, { integrationId: row.id, integrationType: 'waiting', tool: 'wait' }, {}, signal);
  return { call, log };
}

describe('agent tools: the time limit of a call', () => {
  it('answers a call past INTEGRATION_TIMEOUT_MS as such, retryable, not as an unexpected failure', async () => {
    const { call, log } = tools(50);
    const result = await call(new AbortController().signal);
    expect(result).toEqual({ ok: false, summary: 'Waiting: no answer within 50 ms', retryable: true });
    expect(log.warn).not.toHaveBeenCalled();
  });

  it('answers a call its turn cancelled as cancelled', async () => {
    const { call } = tools(60_000);
    const turn = new AbortController();
    const result = call(turn.signal);
    setTimeout(() => turn.abort(new Error('the client left')), 20);
    expect(await result).toEqual({ ok: false, summary: 'Waiting: the call was cancelled', retryable: true });
  });
});
