/**
 * Deployments over HTTP with the job workers off: records, validation, roles, tenancy, every
 * transition of the state machine, the start race, updates, deletes, logs and chat resolution.
 * The roll-out job itself runs in deployments-rollout.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEPLOYMENT_STATUSES, type DeploymentStatus } from '../src/modules/deployments/deployment-state.js';
import { createTestApp, type TestApp } from './helpers/app.js';
import { control, createAgent, createDeployment, logsOf, REGIONS, rolloutJobs } from './helpers/deployments.js';
import { createTenant, type TestTenant } from './helpers/factories.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

async function setup(role: Parameters<typeof createTenant>[1] = 'owner') {
  const tenant = await createTenant(t.container, role);
  const agent = await createAgent(t.container, tenant);
  return { tenant, agent };
}

async function setStatus(id: string, status: DeploymentStatus) {
  await t.container.db.updateTable('deployments').set({ status }).where('id', '=', id).execute();
}

const post = (tenant: TestTenant, payload: Record<string, unknown>) =>
  t.app.inject({ method: 'POST', url: '/api/public/deployments', headers: tenant.headers, payload });

describe('create', () => {
  it('creates a pending deployment of an agent with its languages and agent_key', async () => {
    const { tenant, agent } = await setup('developer');
    const res = await post(tenant, {
      deployable_type: 'agent',
      deployable_id: agent.id,
      channel: 'slack',
      region_id: REGIONS.euWest,
      config: '{"greeting":"hi"}',
    });
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(body).toMatchObject({
      deployable_type: 'agent',
      deployable_id: agent.id,
      agent_id: agent.id,
      company_id: tenant.companyId,
      user_id: tenant.userId,
      channel: 'slack',
      region_id: REGIONS.euWest,
      languages: 'en,ar',
      status: 'pending',
      config: '{"greeting":"hi"}',
      error: null,
      agent_key: `agent:${agent.id}:slack:eu-west`,
    });
    expect(body.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const logs = await logsOf(t.app, tenant, body.id);
    expect(logs.map((l) => l.message)).toEqual([expect.stringContaining('Deployment created (pending)')]);
  });

  it('normalizes languages and defaults config to {}', async () => {
    const { tenant, agent } = await setup();
    const body = await createDeployment(t.app, tenant, agent.id, { languages: ' EN , ar-sa,en ' });
    expect(body.languages).toBe('en,ar-SA');
    expect(body.config).toBe('{}');
  });

  it.each([
    ['deployable_type', { deployable_type: undefined }, 'is required'],
    ['deployable_id', { deployable_id: undefined }, 'is required'],
    ['channel', { channel: undefined }, 'is required'],
    ['region_id', { region_id: undefined }, 'is required'],
    ['deployable_type', { deployable_type: 'robot' }, 'must be one of: agent, workflow'],
    ['deployable_id', { deployable_id: 'not-a-uuid' }, 'must be a UUID'],
    ['channel', { channel: 42 }, 'must be string'],
    ['channel', { channel: 'Web Chat' }, 'lowercase word'],
    ['channel', { channel: 'x'.repeat(51) }, 'must NOT have more than 50 characters'],
    ['region_id', { region_id: '00000000-0000-4000-8000-000000000000' }, 'unknown region'],
    ['languages', { languages: 'english' }, '"english" is not a language code'],
    ['languages', { languages: ['en'] }, 'must be string'],
    ['config', { config: '{broken' }, 'must be valid JSON text'],
    ['config', { config: '[1,2]' }, 'JSON text of an object'],
    ['config', { config: { a: 1 } }, 'must be string'],
    ['config', { config: `{"a":"${'x'.repeat(70_000)}"}` }, 'must NOT have more than 65536 characters'],
    ['deployable_id', { deployable_type: 'workflow' }, 'no workflow'],
  ])('400 naming %s for %j', async (name, change, problem) => {
    const { tenant, agent } = await setup();
    const payload: Record<string, unknown> = {
      deployable_type: 'agent',
      deployable_id: agent.id,
      channel: 'web',
      region_id: REGIONS.usEast,
      ...change,
    };
    for (const key of Object.keys(payload)) if (payload[key] === undefined) delete payload[key];
    const res = await post(tenant, payload);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ detail: expect.stringContaining(`'${name}'`), status_code: 400 });
    expect(res.json().detail).toContain(problem);
  });

  it('400 naming deployable_id for an agent of another company', async () => {
    const { tenant } = await setup();
    const { agent: foreign } = await setup();
    const res = await post(tenant, {
      deployable_type: 'agent',
      deployable_id: foreign.id,
      channel: 'web',
      region_id: REGIONS.usEast,
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().detail).toBe(`Invalid field 'deployable_id': no agent ${foreign.id} in your company`);
  });
});

describe('authentication, roles and tenancy', () => {
  it('401 without a key, in the family shape', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/public/deployments' });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({ detail: 'Missing x-api-key header', status_code: 401 });
  });

  it('members read but cannot write (403)', async () => {
    const { tenant, agent } = await setup();
    const deployment = await createDeployment(t.app, tenant, agent.id);
    const member = await tenant.member('member');
    const reads = [
      { method: 'GET' as const, url: '/api/public/deployments' },
      { method: 'GET' as const, url: `/api/public/deployments/${deployment.id}` },
      { method: 'GET' as const, url: `/api/public/deployments/${deployment.id}/logs` },
    ];
    for (const read of reads) expect((await t.app.inject({ ...read, headers: member.headers })).statusCode).toBe(200);
    const writes = [
      {
        method: 'POST' as const,
        url: '/api/public/deployments',
        payload: { deployable_type: 'agent', deployable_id: agent.id, channel: 'web', region_id: REGIONS.usEast },
      },
      { method: 'PUT' as const, url: `/api/public/deployments/${deployment.id}`, payload: { channel: 'teams' } },
      { method: 'DELETE' as const, url: `/api/public/deployments/${deployment.id}` },
      ...['start', 'stop', 'pause', 'resume'].map((action) => ({
        method: 'POST' as const,
        url: `/api/public/deployments/${deployment.id}/${action}`,
      })),
    ];
    for (const write of writes) {
      const res = await t.app.inject({ ...write, headers: member.headers });
      expect(res.statusCode, `${write.method} ${write.url}`).toBe(403);
      expect(res.json()).toEqual({
        detail: 'This operation needs the developer role; your role is member',
        status_code: 403,
      });
    }
    expect((await control(t.app, await tenant.member('developer'), deployment.id, 'start')).statusCode).toBe(200);
  });

  it('another company sees 404 on every operation and nothing in its list', async () => {
    const { tenant, agent } = await setup();
    const deployment = await createDeployment(t.app, tenant, agent.id);
    const other = await createTenant(t.container);
    const calls = [
      { method: 'GET' as const, url: `/api/public/deployments/${deployment.id}` },
      { method: 'GET' as const, url: `/api/public/deployments/${deployment.id}/logs` },
      { method: 'PUT' as const, url: `/api/public/deployments/${deployment.id}`, payload: { channel: 'teams' } },
      { method: 'DELETE' as const, url: `/api/public/deployments/${deployment.id}` },
      ...['start', 'stop', 'pause', 'resume'].map((action) => ({
        method: 'POST' as const,
        url: `/api/public/deployments/${deployment.id}/${action}`,
      })),
    ];
    for (const call of calls) {
      const res = await t.app.inject({ ...call, headers: other.headers });
      expect(res.statusCode, `${call.method} ${call.url}`).toBe(404);
      expect(res.json()).toEqual({ detail: `Deployment not found: ${deployment.id}`, status_code: 404 });
    }
    const list = await t.app.inject({ method: 'GET', url: '/api/public/deployments', headers: other.headers });
    expect(list.json()).toEqual({ data: [], total: 0, skip: 0, limit: 20 });
    expect(
      (
        await t.app.inject({ method: 'GET', url: `/api/public/deployments/${deployment.id}`, headers: tenant.headers })
      ).json().status,
    ).toBe('pending');
  });

  it('400 for a malformed id', async () => {
    const { tenant } = await setup();
    const res = await t.app.inject({ method: 'GET', url: '/api/public/deployments/nope', headers: tenant.headers });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ detail: "Invalid path parameter 'deploymentId': must be a UUID", status_code: 400 });
  });
});

describe('list', () => {
  it('pages newest first and filters by status, channel and deployable_type', async () => {
    const { tenant, agent } = await setup();
    const ids: string[] = [];
    for (const channel of ['web', 'slack', 'web', 'teams', 'web'])
      ids.push((await createDeployment(t.app, tenant, agent.id, { channel })).id);
    await setStatus(ids[0]!, 'failed');
    const get = async (query: string) =>
      (await t.app.inject({ method: 'GET', url: `/api/public/deployments${query}`, headers: tenant.headers })).json();

    const all = await get('');
    expect(all.total).toBe(5);
    expect(all.data.map((d: { id: string }) => d.id)).toEqual([...ids].reverse());
    const page = await get('?skip=1&limit=2');
    expect(page).toMatchObject({ total: 5, skip: 1, limit: 2 });
    expect(page.data.map((d: { id: string }) => d.id)).toEqual([ids[3], ids[2]]);
    const web = await get('?channel=web');
    expect(web.total).toBe(3);
    const failed = await get('?status=failed');
    expect(failed.data.map((d: { id: string }) => d.id)).toEqual([ids[0]]);
    expect((await get('?deployable_type=workflow')).total).toBe(0);
    expect((await get('?deployable_type=agent&status=pending&channel=web')).total).toBe(2);
  });

  it.each([
    ['?limit=101', "Invalid query parameter 'limit': must be at most 100"],
    ['?limit=0', "Invalid query parameter 'limit': must be at least 1"],
    ['?skip=-1', "Invalid query parameter 'skip': must be at least 0"],
    [
      '?status=running',
      "Invalid query parameter 'status': must be one of: pending, deploying, active, failed, cancelled, paused",
    ],
    ['?deployable_type=bot', "Invalid query parameter 'deployable_type': must be one of: agent, workflow"],
  ])('400 for %s', async (query, detail) => {
    const { tenant } = await setup();
    const res = await t.app.inject({ method: 'GET', url: `/api/public/deployments${query}`, headers: tenant.headers });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ detail, status_code: 400 });
  });
});

const EXPECTED: Record<string, Partial<Record<DeploymentStatus, DeploymentStatus>>> = {
  start: { pending: 'deploying', failed: 'deploying', cancelled: 'deploying' },
  stop: { deploying: 'cancelled', active: 'cancelled', paused: 'cancelled' },
  pause: { active: 'paused' },
  resume: { paused: 'active' },
};

describe('control transitions', () => {
  const cases = Object.entries(EXPECTED).flatMap(([action, moves]) =>
    DEPLOYMENT_STATUSES.map((from) => ({ action, from, to: moves[from] ?? null })),
  );

  it.each(cases)('$action from $from → $to', async ({ action, from, to }) => {
    const { tenant, agent } = await setup('developer');
    const deployment = await createDeployment(t.app, tenant, agent.id);
    await setStatus(deployment.id, from);
    const res = await control(t.app, tenant, deployment.id, action);
    const after = (
      await t.app.inject({ method: 'GET', url: `/api/public/deployments/${deployment.id}`, headers: tenant.headers })
    ).json();
    const notifications = await t.container.db
      .selectFrom('notifications')
      .selectAll()
      .where('company_id', '=', tenant.companyId)
      .where('category', '=', 'deployment')
      .execute();
    if (to === null) {
      expect(res.statusCode).toBe(409);
      expect(res.json()).toEqual({
        detail: expect.stringContaining(`Cannot ${action} a deployment whose status is ${from}`),
        status_code: 409,
      });
      expect(after.status).toBe(from);
      expect(notifications).toHaveLength(0);
    } else {
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({ id: deployment.id, status: to });
      expect(after.status).toBe(to);
      const logs = await logsOf(t.app, tenant, deployment.id);
      expect(logs.at(-1)).toMatchObject({ level: 'info', message: expect.stringContaining(`${from} → ${to}`) });
      expect(notifications).toHaveLength(1);
      expect(notifications[0]).toMatchObject({
        notification_type: 'system',
        category: 'deployment',
        sender_id: tenant.userId,
        metadata: expect.objectContaining({
          deployment_id: deployment.id,
          agent_id: agent.id,
          status: to,
          previous_status: from,
        }),
        action_url: expect.stringContaining(`/api/public/deployments/${deployment.id}`),
      });
    }
    expect(await rolloutJobs(t.container, deployment.id)).toBe(action === 'start' && to !== null ? 1 : 0);
  });

  it('two racing starts produce one transition and one roll-out job', async () => {
    const { tenant, agent } = await setup();
    const deployment = await createDeployment(t.app, tenant, agent.id);
    const results = await Promise.all([1, 2, 3].map(() => control(t.app, tenant, deployment.id, 'start')));
    expect(results.map((r) => r.statusCode).sort()).toEqual([200, 409, 409]);
    expect(results.find((r) => r.statusCode === 409)!.json().detail).toContain('whose status is deploying');
    expect(await rolloutJobs(t.container, deployment.id)).toBe(1);
    const logs = await logsOf(t.app, tenant, deployment.id);
    expect(logs.filter((l) => l.message.includes('pending → deploying'))).toHaveLength(1);
  });

  it('409 when another deployment of the agent is live on the same channel and region', async () => {
    const { tenant, agent } = await setup();
    const first = await createDeployment(t.app, tenant, agent.id);
    const second = await createDeployment(t.app, tenant, agent.id);
    const elsewhere = await createDeployment(t.app, tenant, agent.id, { region_id: REGIONS.euWest });
    expect((await control(t.app, tenant, first.id, 'start')).statusCode).toBe(200);
    const res = await control(t.app, tenant, second.id, 'start');
    expect(res.statusCode).toBe(409);
    expect(res.json().detail).toBe(
      `Deployment ${first.id} of this agent is already deploying on channel web in region us-east; stop it first`,
    );
    expect((await control(t.app, tenant, elsewhere.id, 'start')).statusCode).toBe(200);
    expect((await control(t.app, tenant, first.id, 'stop')).statusCode).toBe(200);
    expect((await control(t.app, tenant, second.id, 'start')).statusCode).toBe(200);
  });

  it('accepts a control call with an empty JSON body; bad JSON is a 400', async () => {
    const { tenant, agent } = await setup();
    const deployment = await createDeployment(t.app, tenant, agent.id);
    const url = `/api/public/deployments/${deployment.id}/start`;
    const headers = { ...tenant.headers, 'content-type': 'application/json' };
    const empty = await t.app.inject({ method: 'POST', url, headers, payload: '' });
    expect(empty.statusCode).toBe(200);
    expect(empty.json().status).toBe('deploying');
    const broken = await t.app.inject({
      method: 'POST',
      url: '/api/public/deployments',
      headers,
      payload: '{"deployable_type":',
    });
    expect(broken.statusCode).toBe(400);
    expect(broken.json().status_code).toBe(400);
    const none = await t.app.inject({ method: 'POST', url: '/api/public/deployments', headers, payload: '' });
    expect(none.statusCode).toBe(400);
    expect(none.json()).toEqual({ detail: expect.stringContaining('body'), status_code: 400 });
  });

  it('a restart clears the previous error', async () => {
    const { tenant, agent } = await setup();
    const deployment = await createDeployment(t.app, tenant, agent.id);
    await t.container.db
      .updateTable('deployments')
      .set({ status: 'failed', error: 'Agent is incomplete' })
      .where('id', '=', deployment.id)
      .execute();
    const res = await control(t.app, tenant, deployment.id, 'start');
    expect(res.json()).toMatchObject({ status: 'deploying', error: null });
  });
});

describe('update', () => {
  const put = (tenant: TestTenant, id: string, payload: Record<string, unknown>) =>
    t.app.inject({ method: 'PUT', url: `/api/public/deployments/${id}`, headers: tenant.headers, payload });

  it('updates a pending deployment', async () => {
    const { tenant, agent } = await setup();
    const deployment = await createDeployment(t.app, tenant, agent.id);
    const res = await put(tenant, deployment.id, {
      channel: 'teams',
      region_id: REGIONS.euWest,
      languages: 'fr',
      config: '{"x":1}',
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      channel: 'teams',
      region_id: REGIONS.euWest,
      languages: 'fr',
      config: '{"x":1}',
      status: 'pending',
      agent_key: `agent:${agent.id}:teams:eu-west`,
    });
  });

  it('applies a change to an active deployment at once and logs it', async () => {
    const { tenant, agent } = await setup();
    const deployment = await createDeployment(t.app, tenant, agent.id);
    await setStatus(deployment.id, 'active');
    const res = await put(tenant, deployment.id, { channel: 'teams', config: '{"tone":"formal"}' });
    expect(res.json()).toMatchObject({ status: 'active', channel: 'teams', config: '{"tone":"formal"}' });
    const logs = await logsOf(t.app, tenant, deployment.id);
    expect(logs.at(-1)!.message).toBe('Settings updated while active; applied at once: channel web → teams, config');
    await expect(
      t.container.deployments.resolveForChat(tenant.companyId, agent.id, 'teams', 'us-east'),
    ).resolves.toMatchObject({ id: deployment.id });
  });

  it('409 while deploying', async () => {
    const { tenant, agent } = await setup();
    const deployment = await createDeployment(t.app, tenant, agent.id);
    await control(t.app, tenant, deployment.id, 'start');
    const res = await put(tenant, deployment.id, { channel: 'teams' });
    expect(res.statusCode).toBe(409);
    expect(res.json().detail).toContain('whose status is deploying');
  });

  it('409 when moving a live deployment onto the key of another live one', async () => {
    const { tenant, agent } = await setup();
    const a = await createDeployment(t.app, tenant, agent.id, { channel: 'web' });
    const b = await createDeployment(t.app, tenant, agent.id, { channel: 'teams' });
    await setStatus(a.id, 'active');
    await setStatus(b.id, 'paused');
    const res = await put(tenant, b.id, { channel: 'web' });
    expect(res.statusCode).toBe(409);
    expect(res.json().detail).toContain(`Deployment ${a.id} of this agent is already active`);
  });

  it.each([
    [{ channel: 'A B' }, 'channel'],
    [{ region_id: '00000000-0000-4000-8000-000000000000' }, 'region_id'],
    [{ languages: '' }, 'languages'],
    [{ config: 'nope' }, 'config'],
    [{ config: 5 }, 'config'],
  ])('400 for %j', async (payload, name) => {
    const { tenant, agent } = await setup();
    const deployment = await createDeployment(t.app, tenant, agent.id);
    const res = await put(tenant, deployment.id, payload);
    expect(res.statusCode).toBe(400);
    expect(res.json().detail).toContain(`'${name}'`);
  });
});

describe('delete', () => {
  it('204 and gone', async () => {
    const { tenant, agent } = await setup();
    const deployment = await createDeployment(t.app, tenant, agent.id);
    const res = await t.app.inject({
      method: 'DELETE',
      url: `/api/public/deployments/${deployment.id}`,
      headers: tenant.headers,
    });
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');
    expect(
      (await t.app.inject({ method: 'GET', url: `/api/public/deployments/${deployment.id}`, headers: tenant.headers }))
        .statusCode,
    ).toBe(404);
  });

  it('cancels a deploying deployment first (with its notification), then deletes it', async () => {
    const { tenant, agent } = await setup();
    const deployment = await createDeployment(t.app, tenant, agent.id);
    await control(t.app, tenant, deployment.id, 'start');
    const res = await t.app.inject({
      method: 'DELETE',
      url: `/api/public/deployments/${deployment.id}`,
      headers: tenant.headers,
    });
    expect(res.statusCode).toBe(204);
    const notes = await t.container.db
      .selectFrom('notifications')
      .select(['title', 'metadata'])
      .where('company_id', '=', tenant.companyId)
      .orderBy('created_at')
      .execute();
    expect(notes.map((n) => [n.title, n.metadata.status])).toEqual([
      ['Deployment started', 'deploying'],
      ['Deployment stopped', 'cancelled'],
    ]);
    // The key is free again: a new deployment of the agent there can start.
    const next = await createDeployment(t.app, tenant, agent.id);
    expect((await control(t.app, tenant, next.id, 'start')).statusCode).toBe(200);
  });
});

describe('logs', () => {
  it('returns the latest `limit` entries oldest first, and pages forward with `since`', async () => {
    const { tenant, agent } = await setup();
    const deployment = await createDeployment(t.app, tenant, agent.id);
    for (let i = 1; i <= 150; i++) {
      await t.container.deployments.logEvent(
        deployment.id,
        i % 50 === 0 ? 'error' : i % 10 === 0 ? 'warning' : 'info',
        `event ${i}`,
      );
    }
    const latest = await logsOf(t.app, tenant, deployment.id);
    expect(latest).toHaveLength(100);
    expect(latest.at(0)!.message).toBe('event 51');
    expect(latest.at(-1)!.message).toBe('event 150');
    const times = latest.map((l) => Date.parse(l.timestamp));
    expect([...times].sort((a, b) => a - b)).toEqual(times);
    expect(new Set(latest.map((l) => l.level))).toEqual(new Set(['info', 'warning', 'error']));

    const five = await logsOf(t.app, tenant, deployment.id, '?limit=5');
    expect(five.map((l) => l.message)).toEqual(['event 146', 'event 147', 'event 148', 'event 149', 'event 150']);

    const all = await logsOf(t.app, tenant, deployment.id, '?limit=1000');
    expect(all).toHaveLength(151);
    const pivot = all[120]!;
    const since = await logsOf(t.app, tenant, deployment.id, `?since=${encodeURIComponent(pivot.timestamp)}&limit=3`);
    expect(since[0]!.timestamp >= pivot.timestamp).toBe(true);
    expect(since.map((l) => l.message)).toEqual(
      all
        .filter((l) => l.timestamp >= pivot.timestamp)
        .slice(0, 3)
        .map((l) => l.message),
    );
    expect(await logsOf(t.app, tenant, deployment.id, '?since=2999-01-01')).toEqual([]);
  });

  it.each([
    ['?limit=1001', "Invalid query parameter 'limit': must be at most 1000"],
    ['?limit=abc', "Invalid query parameter 'limit': must be integer"],
    ['?since=yesterday', "Invalid query parameter 'since': must be an ISO 8601 date or date-time"],
  ])('400 for %s', async (query, detail) => {
    const { tenant, agent } = await setup();
    const deployment = await createDeployment(t.app, tenant, agent.id);
    const res = await t.app.inject({
      method: 'GET',
      url: `/api/public/deployments/${deployment.id}/logs${query}`,
      headers: tenant.headers,
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ detail, status_code: 400 });
  });

  it('logEvent on a deleted deployment is ignored', async () => {
    const { tenant, agent } = await setup();
    const deployment = await createDeployment(t.app, tenant, agent.id);
    await t.app.inject({ method: 'DELETE', url: `/api/public/deployments/${deployment.id}`, headers: tenant.headers });
    await expect(t.container.deployments.logEvent(deployment.id, 'info', 'chat served')).resolves.toBeUndefined();
  });
});

describe('resolveForChat', () => {
  it('finds the active deployment; paused → 409; none or another company → 404', async () => {
    const { tenant, agent } = await setup();
    const deployment = await createDeployment(t.app, tenant, agent.id, { channel: 'web', region_id: REGIONS.euWest });
    const resolve = (companyId: string, channel = 'web', region = 'eu-west') =>
      t.container.deployments.resolveForChat(companyId, agent.id, channel, region);
    await expect(resolve(tenant.companyId)).rejects.toMatchObject({
      statusCode: 404,
      message: `No active deployment for agent ${agent.id} on channel web in region eu-west`,
    });
    await setStatus(deployment.id, 'active');
    await expect(resolve(tenant.companyId)).resolves.toMatchObject({ id: deployment.id, status: 'active' });
    await expect(resolve(tenant.companyId, 'slack')).rejects.toMatchObject({ statusCode: 404 });
    await expect(resolve(tenant.companyId, 'web', 'us-east')).rejects.toMatchObject({ statusCode: 404 });
    await expect(resolve((await createTenant(t.container)).companyId)).rejects.toMatchObject({ statusCode: 404 });
    await control(t.app, tenant, deployment.id, 'pause');
    await expect(resolve(tenant.companyId)).rejects.toMatchObject({
      statusCode: 409,
      message: expect.stringContaining('is paused'),
    });
  });
});

describe('OpenAPI', () => {
  it("documents the ten operations and the widget's two", async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json<{
      paths: Record<string, Record<string, { operationId?: string }>>;
    }>();
    const ids = Object.entries(doc.paths)
      .filter(([path]) => path.startsWith('/api/public/deployments'))
      .flatMap(([, methods]) => Object.values(methods).map((operation) => operation.operationId))
      .sort();
    expect(ids).toEqual([
      'createDeployment',
      'deleteDeployment',
      'getDeployment',
      'getDeploymentLogs',
      'getDeploymentWidget',
      'listDeployments',
      'pauseDeployment',
      'resumeDeployment',
      'rotateDeploymentWidgetKey',
      'startDeployment',
      'stopDeployment',
      'updateDeployment',
    ]);
  });
});
