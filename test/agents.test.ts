import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './helpers/app.js';
import { createTenant } from './helpers/factories.js';

let t: TestApp;
const providers = JSON.stringify([
  { name: 'local', type: 'openai-compatible', base_url: 'http://127.0.0.1:9/v1', models: ['tiny'] },
]);
beforeAll(async () => {
  t = await createTestApp({ LLM_PROVIDERS: providers });
});
afterAll(async () => t.close());

describe('agents', () => {
  it('creates, reads, lists, updates and deletes an agent', async () => {
    const tenant = await createTenant(t.container);
    const created = await t.app.inject({
      method: 'POST',
      url: '/api/public/agents',
      headers: tenant.headers,
      payload: {
        title: 'Helpdesk',
        instructions: 'Be brief.',
        languages: ['en', 'ar'],
        escalation: { contact_email: 'help@example.com' },
      },
    });
    expect(created.statusCode).toBe(201);
    const agent = created.json();
    expect(agent).toMatchObject({
      title: 'Helpdesk',
      model: 'builtin:kb',
      temperature: 0.7,
      languages: ['en', 'ar'],
      company_id: tenant.companyId,
    });
    expect(agent.escalation).toEqual({ enabled: true, contact_email: 'help@example.com', message: '' });
    expect(agent.performance_metrics).toEqual({
      total_queries_handled: 0,
      avg_resolution_time: 0,
      success_rate: 0,
      customer_satisfaction_avg: 0,
    });

    const got = await t.app.inject({ method: 'GET', url: `/api/public/agents/${agent.id}`, headers: tenant.headers });
    expect(got.json().id).toBe(agent.id);

    const updated = await t.app.inject({
      method: 'PUT',
      url: `/api/public/agents/${agent.id}`,
      headers: tenant.headers,
      payload: { model: 'local:tiny', temperature: 1.5, escalation: { enabled: false } },
    });
    expect(updated.statusCode).toBe(200);
    expect(updated.json()).toMatchObject({ model: 'local:tiny', temperature: 1.5, title: 'Helpdesk' });
    expect(updated.json().escalation).toEqual({ enabled: false, contact_email: 'help@example.com', message: '' });

    const list = await t.app.inject({ method: 'GET', url: '/api/public/agents?limit=5', headers: tenant.headers });
    expect(list.json()).toMatchObject({ total: 1, skip: 0, limit: 5 });
    expect(list.json().data[0].id).toBe(agent.id);

    const deleted = await t.app.inject({
      method: 'DELETE',
      url: `/api/public/agents/${agent.id}`,
      headers: tenant.headers,
    });
    expect(deleted.statusCode).toBe(204);
    const gone = await t.app.inject({ method: 'GET', url: `/api/public/agents/${agent.id}`, headers: tenant.headers });
    expect(gone.statusCode).toBe(404);
    expect(gone.json()).toEqual({ detail: `Agent not found: ${agent.id}`, status_code: 404 });
  });

  it.each([
    [{ title: 'x', model: 'openai:gpt-4o-mini' }, /provider "openai" is not configured/],
    [{ title: 'x', model: 'local:huge' }, /not one of local's models: tiny/],
    [{ title: 'x', temperature: 2.5 }, /temperature/],
    [{ title: 'x', temperature: -0.1 }, /temperature/],
    [{ title: 'x', temperature: '1' }, /temperature.*must be number/],
    [{ title: '' }, /title/],
    [{}, /'title': is required/],
    [{ title: 'x', collection_ids: ['not-a-uuid'] }, /collection_ids.0.*UUID/],
    [{ title: 'x', languages: ['english!'] }, /languages/],
    [{ title: 'x'.repeat(201) }, /title/],
  ])('rejects %j with 400', async (payload, message) => {
    const tenant = await createTenant(t.container);
    const res = await t.app.inject({ method: 'POST', url: '/api/public/agents', headers: tenant.headers, payload });
    expect(res.statusCode).toBe(400);
    expect(res.json().status_code).toBe(400);
    expect(res.json().detail).toMatch(message);
  });

  it("accepts only collection and integration ids of the caller's company", async () => {
    const mine = await createTenant(t.container);
    const other = await createTenant(t.container);
    const integration = await t.container.db
      .insertInto('integrations')
      .values({ company_id: other.companyId, name: 'Slack', type: 'slack' })
      .returning('id')
      .executeTakeFirstOrThrow();
    const foreign = await t.app.inject({
      method: 'POST',
      url: '/api/public/agents',
      headers: mine.headers,
      payload: { title: 'x', integration_ids: [integration.id] },
    });
    expect(foreign.statusCode).toBe(400);
    expect(foreign.json().detail).toContain(`integration not found: ${integration.id}`);
    const own = await t.app.inject({
      method: 'POST',
      url: '/api/public/agents',
      headers: other.headers,
      payload: { title: 'x', integration_ids: [integration.id] },
    });
    expect(own.statusCode).toBe(201);
    const collection = '00000000-0000-4000-8000-000000000001';
    const unknown = await t.app.inject({
      method: 'POST',
      url: '/api/public/agents',
      headers: mine.headers,
      payload: { title: 'x', collection_ids: [collection] },
    });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().detail).toContain(`collection not found: ${collection}`);
    const theirs = await t.app.inject({
      method: 'POST',
      url: '/api/public/collections',
      headers: other.headers,
      payload: { name: 'Theirs', company_id: other.companyId },
    });
    expect(theirs.statusCode).toBe(201);
    const foreignCollection = await t.app.inject({
      method: 'POST',
      url: '/api/public/agents',
      headers: mine.headers,
      payload: { title: 'x', collection_ids: [theirs.json().id] },
    });
    expect(foreignCollection.statusCode).toBe(400);
    expect(foreignCollection.json().detail).toContain(`collection not found: ${theirs.json().id}`);
    const ownCollection = await t.app.inject({
      method: 'POST',
      url: '/api/public/agents',
      headers: other.headers,
      payload: { title: 'x', collection_ids: [theirs.json().id] },
    });
    expect(ownCollection.statusCode).toBe(201);
    expect(ownCollection.json().collection_ids).toEqual([theirs.json().id]);
  });

  it('hides agents of other companies and enforces roles', async () => {
    const owner = await createTenant(t.container);
    const stranger = await createTenant(t.container);
    const agent = (
      await t.app.inject({
        method: 'POST',
        url: '/api/public/agents',
        headers: owner.headers,
        payload: { title: 'Mine' },
      })
    ).json();
    for (const method of ['GET', 'DELETE'] as const) {
      const res = await t.app.inject({ method, url: `/api/public/agents/${agent.id}`, headers: stranger.headers });
      expect(res.statusCode).toBe(404);
    }
    const put = await t.app.inject({
      method: 'PUT',
      url: `/api/public/agents/${agent.id}`,
      headers: stranger.headers,
      payload: { title: 'Theirs' },
    });
    expect(put.statusCode).toBe(404);
    const member = await owner.member('member');
    expect(
      (await t.app.inject({ method: 'GET', url: `/api/public/agents/${agent.id}`, headers: member.headers }))
        .statusCode,
    ).toBe(200);
    const denied = await t.app.inject({
      method: 'POST',
      url: '/api/public/agents',
      headers: member.headers,
      payload: { title: 'No' },
    });
    expect(denied.statusCode).toBe(403);
    expect(denied.json().detail).toMatch(/developer role/);
    const developer = await owner.member('developer');
    expect(
      (
        await t.app.inject({
          method: 'PATCH',
          url: `/api/public/agents/${agent.id}`,
          headers: developer.headers,
          payload: { title: 'Renamed' },
        })
      ).statusCode,
    ).toBe(200);
    expect((await t.app.inject({ method: 'GET', url: '/api/public/agents' })).statusCode).toBe(401);
    expect(
      (
        await t.app.inject({
          method: 'PATCH',
          url: `/api/public/agents/${agent.id}`,
          headers: developer.headers,
          payload: {},
        })
      ).statusCode,
    ).toBe(400);
    expect(
      (await t.app.inject({ method: 'GET', url: '/api/public/agents/nope', headers: owner.headers })).statusCode,
    ).toBe(400);
    expect(
      (await t.app.inject({ method: 'GET', url: '/api/public/agents?limit=101', headers: owner.headers })).statusCode,
    ).toBe(400);
  });

  it('lists the seeded regions', async () => {
    const tenant = await createTenant(t.container);
    const res = await t.app.inject({ method: 'GET', url: '/api/public/regions', headers: tenant.headers });
    expect(res.statusCode).toBe(200);
    expect(res.json().data.map((region: { slug: string }) => region.slug)).toEqual([
      'ap-southeast',
      'eu-west',
      'me-central',
      'us-east',
      'us-west',
    ]);
    expect((await t.app.inject({ method: 'GET', url: '/api/public/regions' })).statusCode).toBe(401);
  });
});
