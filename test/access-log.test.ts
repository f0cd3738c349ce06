/**
 * The access log (src/http/access-log.ts): each request is logged with its path and its query,
 * credential values masked — by their parameter's name or their shape — so that a token sent in a
 * URL never reaches the log, while filters and identifiers stay readable.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scrubbedQuery } from '../src/http/access-log.js';
import { createTenant } from './helpers/factories.js';
import { createLoggedTestApp, type LoggedTestApp } from './helpers/integrations.js';

const JWT = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U';
const OPAQUE = 'Zq8xP2mW7vN4tR9kL3hJ6gF1dS5aQ0eY';

describe('scrubbedQuery', () => {
  it('masks values by their parameter name, keeps filters and identifiers', () => {
    expect(
      scrubbedQuery('/customer-support?limit=5&status=open&access_token=abc&api_key=k&hub.verify_token=v&skip=0'),
    ).toBe('limit=5&status=open&access_token=••••&api_key=••••&hub.verify_token=••••&skip=0');
    expect(scrubbedQuery('/x?agent_id=0b6a3e4c-9f11-4c1e-8d4a-2a6f0e8b1c11&start_date=2026-01-02T03:04:05Z')).toBe(
      'agent_id=0b6a3e4c-9f11-4c1e-8d4a-2a6f0e8b1c11&start_date=2026-01-02T03%3A04%3A05Z',
    );
  });

  it('masks values and bare names shaped like credentials whatever the name', () => {
    expect(scrubbedQuery(`/x?next=${JWT}&q=refund`)).toBe('next=••••&q=refund');
    expect(scrubbedQuery(`/x?link=${OPAQUE}`)).toBe('link=••••');
    expect(scrubbedQuery(`/x?${OPAQUE}`)).toBe('••••=');
    expect(scrubbedQuery('/x?h=Bearer%20sk-live-0123456789')).toBe('h=••••');
  });

  it('is empty without a query and bounded with a long one', () => {
    expect(scrubbedQuery('/healthz')).toBe('');
    expect(scrubbedQuery('/healthz?')).toBe('');
    expect(scrubbedQuery(`/x?q=${'a'.repeat(5000)}`).length).toBeLessThanOrEqual(513);
  });
});

describe('the access log of a running app', () => {
  let t: LoggedTestApp;
  beforeAll(async () => {
    t = await createLoggedTestApp({ LOG_LEVEL: 'info' });
  });
  afterAll(() => t?.close());

  it('logs the path and the scrubbed query of each request, never a token in the URL', async () => {
    const tenant = await createTenant(t.container);
    const secret = `sk_query_${OPAQUE}`;
    const res = await t.app.inject({
      method: 'GET',
      url: `/customer-support?limit=5&status=open&token=${secret}&next=${JWT}`,
      headers: { ...tenant.headers, 'x-request-id': 'access-log-1' },
    });
    expect(res.statusCode).toBeLessThan(500);
    const lines = t.logs.filter((line) => line.includes('access-log-1'));
    const incoming = lines.map((line) => JSON.parse(line) as Record<string, unknown>).find((entry) => entry.req);
    expect(incoming?.req).toMatchObject({
      method: 'GET',
      path: '/customer-support',
      query: 'limit=5&status=open&token=••••&next=••••',
    });
    expect((incoming?.req as Record<string, unknown>).url).toBeUndefined();
    const all = t.logs.join('\n');
    expect(all).not.toContain(secret);
    expect(all).not.toContain(JWT);
    expect(all).not.toContain(OPAQUE);
  });
});
