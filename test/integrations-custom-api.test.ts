/**
 * The custom_api connector against a small REST API checking each auth scheme: the live check,
 * one tool per declared operation (path parameters, query, JSON body, text and truncated
 * answers), path-escape attempts refused before any request, input validated against the
 * operation's JSON schema, vendor failures, and the config rules of the integrations family
 * (bad operation names, undeclared placeholders, too many operations, forbidden headers).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  customApiConnector,
  type CustomApiConfig,
} from '../src/adapters/connectors/custom_api/custom-api.connector.js';
import { createConnectorHttp, type ConnectorHttp } from '../src/adapters/connectors/http.js';
import { createTestApp, type TestApp } from './helpers/app.js';
import { createTenant, type TestTenant } from './helpers/factories.js';
import { startFakeCustomApi, type FakeCustomApi } from './helpers/fake-custom-api.js';
import { integrationsApi } from './helpers/integrations.js';
import { failure, signal, tool } from './helpers/connectors.js';

const options = { allowPrivate: true, timeoutMs: 5_000, maxResponseBytes: 256 * 1024 };

const http: ConnectorHttp = createConnectorHttp(options);
let bearerApi: FakeCustomApi;
let basicApi: FakeCustomApi;
let keyApi: FakeCustomApi;
let openApi: FakeCustomApi;
beforeAll(async () => {
  [bearerApi, basicApi, keyApi, openApi] = await Promise.all([
    startFakeCustomApi({ type: 'bearer', token: 'custom-bearer-token-0001' }, 'acme'),
    startFakeCustomApi({ type: 'basic', user: 'svc', password: 'pa:ss-0002' }),
    startFakeCustomApi({ type: 'api_key', header: 'X-Shop-Key', key: 'shop-key-0003' }),
    startFakeCustomApi({ type: 'none' }),
  ]);
});
afterAll(async () => {
  await Promise.all([bearerApi, basicApi, keyApi, openApi].map((peer) => peer.close()));
  await http.close();
});

describe('custom_api connector', () => {
  const connector = customApiConnector(http);
  const operations: CustomApiConfig['operations'] = [
    {
      name: 'get_order',
      description: 'Read an order.',
      method: 'GET',
      path: '/orders/{order_id}',
      parameters: {
        type: 'object',
        properties: { order_id: { type: 'string', maxLength: 40 } },
        required: ['order_id'],
        additionalProperties: false,
      },
    },
    {
      name: 'list_orders',
      description: 'List orders by status.',
      method: 'GET',
      path: '/orders',
      parameters: {
        type: 'object',
        properties: { status: { type: 'string', enum: ['shipped', 'pending'] } },
        additionalProperties: false,
      },
    },
    {
      name: 'add_note',
      description: 'Add a note to an order.',
      method: 'POST',
      path: '/orders/{order_id}/notes',
      parameters: {
        type: 'object',
        properties: { order_id: { type: 'string' }, note: { type: 'string', minLength: 1 } },
        required: ['order_id', 'note'],
        additionalProperties: false,
      },
    },
    { name: 'status', description: 'Service status.', method: 'GET', path: '/status.txt' },
    { name: 'big', description: 'A long list.', method: 'GET', path: '/big' },
    {
      name: 'cancel_order',
      description: 'Cancel an order.',
      method: 'DELETE',
      path: '/orders/{order_id}',
      parameters: { type: 'object', properties: { order_id: { type: 'string' } }, required: ['order_id'] },
    },
  ];
  const bearer = (overrides: Partial<CustomApiConfig> = {}): CustomApiConfig => ({
    base_url: bearerApi.baseUrl,
    auth_type: 'bearer',
    auth_token: 'custom-bearer-token-0001',
    headers: { 'X-Tenant': 'acme' },
    operations,
    ...overrides,
  });
  const run = (name: string, input: Record<string, unknown>, config = bearer()) =>
    tool(connector, config, name).run(input, { config, signal: signal() });

  it('tests with GET base_url under each auth scheme, and fails on refused credentials, 429 and 5xx', async () => {
    const test = (config: CustomApiConfig) => connector.test({ config, signal: signal() });
    expect((await test(bearer())).detail).toMatch(/^Connected to 127\.0\.0\.1:\d+ \(HTTP 200\)$/);
    expect(bearerApi.requests.at(-1)).toMatchObject({ method: 'GET', path: '/api/v1' });
    expect(bearerApi.requests.at(-1)!.headers['x-tenant']).toBe('acme');
    await test({ base_url: basicApi.baseUrl, auth_type: 'basic', auth_token: 'svc:pa:ss-0002' });
    expect(basicApi.requests.at(-1)!.headers.authorization).toBe(
      `Basic ${Buffer.from('svc:pa:ss-0002').toString('base64')}`,
    );
    await test({
      base_url: keyApi.baseUrl,
      auth_type: 'api_key',
      api_key_header: 'X-Shop-Key',
      auth_token: 'shop-key-0003',
    });
    expect(keyApi.requests.at(-1)!.headers['x-shop-key']).toBe('shop-key-0003');
    expect((await test({ base_url: `${openApi.url}/nowhere` })).detail).toMatch(
      /HTTP 404 at the root; credentials not refused/,
    );

    expect(await failure(test(bearer({ auth_token: 'wrong' })))).toMatchObject({ status: 401, retryable: false });
    expect(await failure(test(bearer({ headers: { 'X-Tenant': 'other' } })))).toMatchObject({ status: 403 });
    expect(
      await failure(test({ base_url: keyApi.baseUrl, auth_type: 'api_key', auth_token: 'shop-key-0003' })),
    ).toMatchObject({ status: 401 }); // sent as X-API-Key, the default, which this API does not read
    bearerApi.fail({ status: 429, headers: { 'retry-after': '2' }, body: { error: 'rate_limited' } });
    expect(await failure(test(bearer()))).toMatchObject({ status: 429, retryable: true, retryAfterMs: 2000 });
    bearerApi.fail({ status: 500, body: { error: 'boom' } });
    expect(await failure(test(bearer()))).toMatchObject({ status: 500, retryable: true });
  });

  it('offers one api_call tool per operation with its JSON schema as input', () => {
    const tools = connector.tools(bearer());
    expect(tools.map((t) => t.name)).toEqual(['get_order', 'list_orders', 'add_note', 'status', 'big', 'cancel_order']);
    expect(tools.every((t) => t.notification === 'api_call')).toBe(true);
    expect(tools[0]!.input).toMatchObject({ type: 'object', required: ['order_id'] });
    expect(connector.tools({ base_url: bearerApi.baseUrl })).toEqual([]);
  });

  it('fills path parameters, sends the rest as query (GET, DELETE) or JSON body (POST)', async () => {
    expect(await run('get_order', { order_id: 'A-100' })).toEqual({
      summary: 'GET get_order: HTTP 200',
      data: { status: 200, body: { id: 'A-100', status: 'shipped', notes: [] } },
    });
    expect(bearerApi.requests.at(-1)!.path).toBe('/api/v1/orders/A-100');
    expect((await run('list_orders', { status: 'pending' })).data).toEqual({
      status: 200,
      body: { orders: [{ id: 'A-101', status: 'pending', notes: [] }] },
    });
    expect(bearerApi.requests.at(-1)!.path).toBe('/api/v1/orders?status=pending');
    expect((await run('add_note', { order_id: 'A-101', note: 'Call back' })).data).toEqual({
      status: 201,
      body: { id: 'A-101', notes: ['Call back'] },
    });
    expect(bearerApi.requests.at(-1)).toMatchObject({
      method: 'POST',
      path: '/api/v1/orders/A-101/notes',
      json: { note: 'Call back' },
    });
    expect(await run('status', {})).toEqual({
      summary: 'GET status: HTTP 200',
      data: { status: 200, body: 'all systems operational' },
    });
    const big = (await run('big', {})).data as { truncated: boolean; body: string };
    expect(big.truncated).toBe(true);
    expect(big.body.length).toBeLessThanOrEqual(8001);
    expect((await run('cancel_order', { order_id: 'A-100' })).data).toEqual({ status: 204, body: null });
    expect(bearerApi.requests.at(-1)).toMatchObject({ method: 'DELETE', path: '/api/v1/orders/A-100' });
  });

  it('encodes path parameters so they cannot leave the template, and refuses dot segments without a request', async () => {
    await failure(run('get_order', { order_id: '../../admin' }));
    expect(bearerApi.requests.at(-1)!.path).toBe('/api/v1/orders/..%2F..%2Fadmin');
    await failure(run('get_order', { order_id: 'x?admin=1#frag' }));
    expect(bearerApi.requests.at(-1)!.path).toBe('/api/v1/orders/x%3Fadmin%3D1%23frag');
    const before = bearerApi.requests.length;
    for (const order_id of ['..', '.']) {
      expect(await failure(run('get_order', { order_id }))).toMatchObject({ code: 'invalid_input', retryable: false });
    }
    const escaping = bearer({
      operations: [{ name: 'up', description: 'd', method: 'GET', path: '/%2e%2e/%2e%2e/secret' }],
    });
    expect(await failure(run('up', {}, escaping))).toMatchObject({ code: 'invalid_input' });
    expect(bearerApi.requests.length).toBe(before);
  });

  it('validates input against the operation schema before calling, and maps vendor failures', async () => {
    const before = bearerApi.requests.length;
    const cases: [string, Record<string, unknown>][] = [
      ['get_order', {}],
      ['get_order', { order_id: 12 }],
      ['get_order', { order_id: 'A-100', extra: true }],
      ['list_orders', { status: 'lost' }],
      ['add_note', { order_id: 'A-100', note: '' }],
      ['status', { anything: 1 }],
    ];
    for (const [name, input] of cases) {
      const error = await failure(run(name, input));
      expect(error).toMatchObject({ code: 'invalid_input', retryable: false });
      expect(error.message).toMatch(new RegExp(`^Custom API: invalid input for ${name}`));
    }
    expect(bearerApi.requests.length).toBe(before);
    expect(await failure(run('get_order', { order_id: 'Z-9' }))).toMatchObject({ status: 404, retryable: false });
    expect((await failure(run('get_order', { order_id: 'Z-9' }))).message).toContain('order Z-9 not found');
    bearerApi.fail({ status: 503, body: { error: 'maintenance' }, headers: { 'retry-after': '30' } });
    expect(await failure(run('get_order', { order_id: 'A-101' }))).toMatchObject({ status: 503, retryable: true });
    expect(await failure(run('get_order', { order_id: 'A-101' }, bearer({ auth_token: 'wrong' })))).toMatchObject({
      status: 401,
      retryable: false,
    });
  });
});

describe('custom_api config in the integrations family', () => {
  let t: TestApp;
  let tenant: TestTenant;
  beforeAll(async () => {
    t = await createTestApp();
    tenant = await createTenant(t.container);
  });
  afterAll(async () => {
    await t.close();
  });

  const base = { name: 'API', type: 'custom_api' };
  const op = (overrides: Record<string, unknown> = {}) => ({
    name: 'get_order',
    description: 'Read an order.',
    method: 'GET',
    path: '/orders/{id}',
    parameters: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
    ...overrides,
  });
  const cases: [string, Record<string, unknown>, RegExp][] = [
    [
      'a bad operation name',
      { operations: [op({ name: 'Get-Order' })] },
      /'config\.operations\.0\.name': has an invalid format/,
    ],
    [
      'an undeclared placeholder',
      { operations: [op({ path: '/orders/{order_id}' })] },
      /'config\.operations\.0\.path': uses \{order_id\}, which must be a required property/,
    ],
    [
      'a declared but optional placeholder',
      { operations: [op({ parameters: { type: 'object', properties: { id: { type: 'string' } } } })] },
      /'config\.operations\.0\.path': uses \{id\}/,
    ],
    [
      'too many operations',
      { operations: Array.from({ length: 21 }, (_, i) => op({ name: `op_${i}` })) },
      /'config\.operations': must have at most 20 entries/,
    ],
    ['no operations', { operations: [] }, /'config\.operations'/],
    [
      'duplicate operation names',
      { operations: [op(), op()] },
      /'config\.operations\.1\.name': duplicates the operation get_order/,
    ],
    [
      'a dot segment in a path',
      { operations: [op({ path: '/a/../b' })] },
      /'config\.operations\.0\.path': must not contain \. or \.\. segments/,
    ],
    [
      'an encoded dot segment in a path',
      { operations: [op({ path: '/a/%2E%2e/b' })] },
      /'config\.operations\.0\.path': must not contain \. or \.\. segments/,
    ],
    [
      'a query in a path',
      { operations: [op({ path: '/orders?x=1' })] },
      /'config\.operations\.0\.path': has an invalid format/,
    ],
    [
      'parameters that are not an object schema',
      { operations: [op({ path: '/o', parameters: { type: 'array' } })] },
      /'config\.operations\.0\.parameters': must be a JSON schema of type object/,
    ],
    [
      'parameters that are not a valid schema',
      { operations: [op({ path: '/o', parameters: { type: 'object', properties: { a: { type: 'bogus' } } } })] },
      /'config\.operations\.0\.parameters': is not a valid JSON schema/,
    ],
    [
      'a forbidden header (Authorization)',
      { headers: { Authorization: 'Bearer x' } },
      /'config\.headers\.Authorization': cannot be set here/,
    ],
    ['a forbidden header (Host)', { headers: { host: 'evil.test' } }, /'config\.headers\.host': cannot be set here/],
    ['a forbidden header (Cookie)', { headers: { Cookie: 'a=b' } }, /'config\.headers\.Cookie'/],
    ['a hop-by-hop header', { headers: { 'Transfer-Encoding': 'chunked' } }, /'config\.headers\.Transfer-Encoding'/],
    [
      'a basic token without a colon',
      { auth_type: 'basic', auth_token: 'justatoken' },
      /'config\.auth_token': must be user:password/,
    ],
    [
      'a header overriding the api key',
      { auth_type: 'api_key', auth_token: 'k', headers: { 'x-api-key': 'other' } },
      /'config\.headers\.x-api-key'/,
    ],
  ];
  for (const [what, config, message] of cases) {
    it(`refuses a custom_api config with ${what} (400 naming the key)`, async () => {
      const res = await integrationsApi(t.app, tenant).create({
        ...base,
        config: { base_url: 'https://api.example.com/v1', ...config },
      });
      expect(res.statusCode).toBe(400);
      expect(res.json().detail).toMatch(message);
    });
  }
});
