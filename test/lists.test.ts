/**
 * List endpoints that read their page and their total in one statement (agents with each
 * agent's performance_metrics, deployments, documents): a list right after a write shows it,
 * and a page past the end still reports the exact total.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './helpers/app.js';
import { chat, chatSetup, US_EAST } from './helpers/chat.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t?.close());

describe('lists in one statement', () => {
  it('agents: the page, the total and each agent’s figures; a write shows at once; past the end keeps the total', async () => {
    const setup = await chatSetup(t.app, t.container);
    const headers = setup.tenant.headers;
    const list = async (query = '') =>
      (await t.app.inject({ method: 'GET', url: `/api/public/agents${query}`, headers })).json();
    expect(await list()).toMatchObject({ total: 1, data: [{ id: setup.agentId }] });
    expect((await chat(t.app, setup, { query: 'Hello' })).statusCode).toBe(200);
    expect((await list()).data[0].performance_metrics.total_queries_handled).toBe(1);
    const second = await t.app.inject({
      method: 'POST',
      url: '/api/public/agents',
      headers,
      payload: { title: 'Second' },
    });
    const page = await list();
    expect(page.total).toBe(2);
    expect(page.data.map((a: { id: string }) => a.id)).toEqual([second.json().id, setup.agentId]);
    expect(page.data[1].performance_metrics.total_queries_handled).toBe(1);
    expect(page.data[0].performance_metrics).toEqual({
      total_queries_handled: 0,
      avg_resolution_time: 0,
      success_rate: 0,
      customer_satisfaction_avg: 0,
    });
    expect(await list('?skip=5&limit=10')).toEqual({ data: [], total: 2, skip: 5, limit: 10 });
  });

  it('deployments: filtered total with the page, and past the end', async () => {
    const setup = await chatSetup(t.app, t.container);
    const headers = setup.tenant.headers;
    const created = await t.app.inject({
      method: 'POST',
      url: '/api/public/deployments',
      headers,
      payload: { deployable_type: 'agent', deployable_id: setup.agentId, channel: 'slack', region_id: US_EAST },
    });
    expect(created.statusCode).toBe(201);
    const all = (await t.app.inject({ method: 'GET', url: '/api/public/deployments', headers })).json();
    expect(all.total).toBe(2);
    expect(all.data[0].id).toBe(created.json().id);
    const active = (
      await t.app.inject({ method: 'GET', url: '/api/public/deployments?status=active', headers })
    ).json();
    expect(active).toMatchObject({ total: 1, data: [{ id: setup.deploymentId }] });
    const past = (await t.app.inject({ method: 'GET', url: '/api/public/deployments?skip=10', headers })).json();
    expect(past).toMatchObject({ data: [], total: 2 });
  });

  it('documents: the new document listed at once, total with filters, and past the end', async () => {
    const setup = await chatSetup(t.app, t.container);
    const headers = setup.tenant.headers;
    for (const [title, categories] of [
      ['Refunds', ['billing']],
      ['Delivery', ['shipping']],
      ['Invoices', ['billing']],
    ] as const) {
      const upload = await t.app.inject({
        method: 'POST',
        url: '/api/public/documents/upload/article',
        headers,
        payload: { document_title: title, content: `${title} explained.`, categories },
      });
      expect(upload.statusCode).toBe(202);
    }
    const list = async (body: object) =>
      (await t.app.inject({ method: 'POST', url: '/api/public/documents/list', headers, payload: body })).json();
    const first = await list({ limit: 2 });
    expect(first.total).toBe(3);
    expect(first.data.map((d: { title: string }) => d.title)).toEqual(['Invoices', 'Delivery']);
    expect((await list({ categories: ['billing'] })).total).toBe(2);
    const past = await list({ page: 5, limit: 2 });
    expect(past.total).toBe(3);
    expect(past.data).toEqual([]);
  });
});
