import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './helpers/app.js';
import { createTenant } from './helpers/factories.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

describe('harness', () => {
  it('serves the current company to its owner', async () => {
    const tenant = await createTenant(t.container);
    const res = await t.app.inject({ method: 'GET', url: '/api/public/companies/current', headers: tenant.headers });
    expect(res.statusCode).toBe(200);
    expect(res.json().id).toBe(tenant.companyId);
  });
});
