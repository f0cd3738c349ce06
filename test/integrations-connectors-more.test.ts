/**
 * WhatsApp Cloud API and Odoo JSON-RPC connectors against peers that answer like them: live
 * checks (good and bad credentials, rate limits, outages), each tool's success and vendor
 * failures, input refused before any call, and the live check of the three kinds (with
 * custom_api) through `POST /integrations/{id}/test`. custom_api's own cases are in
 * integrations-custom-api.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createConnectorHttp, type ConnectorHttp } from '../src/adapters/connectors/http.js';
import { odooConnector, type OdooConfig } from '../src/adapters/connectors/odoo/odoo.connector.js';
import { whatsappConnector, type WhatsappConfig } from '../src/adapters/connectors/whatsapp/whatsapp.connector.js';
import { createTestApp, type TestApp } from './helpers/app.js';
import { createTenant, type TestTenant } from './helpers/factories.js';
import { startFakeCustomApi, type FakeCustomApi } from './helpers/fake-custom-api.js';
import { startFakeOdoo, type FakeOdoo } from './helpers/fake-odoo.js';
import { graphError, startFakeWhatsapp, type FakeWhatsapp } from './helpers/fake-whatsapp.js';
import { integrationsApi } from './helpers/integrations.js';
import { failure, signal, tool } from './helpers/connectors.js';

const options = { allowPrivate: true, timeoutMs: 5_000, maxResponseBytes: 256 * 1024 };

const http: ConnectorHttp = createConnectorHttp(options);
let wa: FakeWhatsapp;
let odoo: FakeOdoo;
let bearerApi: FakeCustomApi;
beforeAll(async () => {
  [wa, odoo, bearerApi] = await Promise.all([
    startFakeWhatsapp(),
    startFakeOdoo(),
    startFakeCustomApi({ type: 'bearer', token: 'custom-bearer-token-0001' }, 'acme'),
  ]);
});
afterAll(async () => {
  await Promise.all([wa, odoo, bearerApi].map((peer) => peer.close()));
  await http.close();
});

describe('WhatsApp connector', () => {
  const connector = () => whatsappConnector(http);
  const config = (overrides: Partial<WhatsappConfig> = {}): WhatsappConfig => ({
    access_token: wa.token,
    phone_number_id: wa.phoneNumberId,
    api_version: 'v21.0',
    base_url: wa.url,
    ...overrides,
  });

  it('tests by reading the phone number with a bearer token', async () => {
    const outcome = await connector().test({ config: config(), signal: signal() });
    expect(outcome.detail).toBe('Connected to WhatsApp Business number +1 555-010-0199 (Acme Support)');
    const request = wa.requests.at(-1)!;
    expect(request).toMatchObject({
      method: 'GET',
      path: `/v21.0/${wa.phoneNumberId}?fields=display_phone_number,verified_name`,
    });
    expect(request.headers.authorization).toBe(`Bearer ${wa.token}`);
  });

  it('fails the test on a bad token (190 → 401, final), a wrong number id, 429 and 5xx (retryable)', async () => {
    const bad = await failure(connector().test({ config: config({ access_token: 'EAAGwrong' }), signal: signal() }));
    expect(bad).toMatchObject({ status: 401, code: '190', retryable: false });
    expect(bad.message).toContain('Invalid OAuth access token');
    expect(bad.message).not.toContain('EAAGwrong');
    const unknown = await failure(connector().test({ config: config({ phone_number_id: '999' }), signal: signal() }));
    expect(unknown).toMatchObject({ status: 400, code: '100', retryable: false });
    wa.fail({
      kind: 'status',
      headers: { 'retry-after': '3' },
      ...graphError(429, 4, '(#4) Application request limit reached'),
    });
    expect(await failure(connector().test({ config: config(), signal: signal() }))).toMatchObject({
      status: 429,
      code: '4',
      retryable: true,
      retryAfterMs: 3000,
    });
    wa.fail({ kind: 'status', ...graphError(503, 131016, 'Service unavailable') });
    expect(await failure(connector().test({ config: config(), signal: signal() }))).toMatchObject({
      status: 503,
      retryable: true,
    });
    wa.fail({ kind: 'status', status: 502, body: '<html>Bad Gateway</html>' });
    expect(await failure(connector().test({ config: config(), signal: signal() }))).toMatchObject({
      status: 502,
      retryable: true,
    });
  });

  it('sends a text message with the Cloud API body and returns the message id', async () => {
    const send = tool(connector(), config(), 'send_message');
    expect(send.notification).toBe('api_call');
    const outcome = await send.run(
      { to: '+14155550123', text: 'Your order shipped.' },
      { config: config(), signal: signal() },
    );
    expect(outcome.summary).toBe('Sent a WhatsApp message to +14155550123');
    expect(outcome.data).toEqual({ message_id: expect.stringMatching(/^wamid\./), wa_id: '14155550123' });
    const request = wa.requests.at(-1)!;
    expect(request.path).toBe(`/v21.0/${wa.phoneNumberId}/messages`);
    expect(request.json).toEqual({
      messaging_product: 'whatsapp',
      recipient_type: 'individual',
      to: '14155550123',
      type: 'text',
      text: { preview_url: false, body: 'Your order shipped.' },
    });
    expect(wa.sent.at(-1)).toEqual({ to: '14155550123', body: 'Your order shipped.' });
  });

  it('refuses bad recipients and texts before calling, and maps undeliverable (final) and throughput limits (retryable)', async () => {
    const send = tool(connector(), config(), 'send_message');
    const before = wa.requests.length;
    for (const to of ['12', '+0123456789', '+1 415 555', 'abc1234567']) {
      expect(await failure(send.run({ to, text: 'x' }, { config: config(), signal: signal() }))).toMatchObject({
        code: 'invalid_recipient',
      });
    }
    expect(
      await failure(send.run({ to: '14155550123', text: 'x'.repeat(4097) }, { config: config(), signal: signal() })),
    ).toMatchObject({ code: 'invalid_text' });
    expect(wa.requests.length).toBe(before);
    const undeliverable = await failure(
      send.run({ to: '15550000000', text: 'hi' }, { config: config(), signal: signal() }),
    );
    expect(undeliverable).toMatchObject({ status: 400, code: '131026', retryable: false });
    expect(undeliverable.message).toContain('Message Undeliverable');
    for (const code of [130429, 80007]) {
      wa.fail({ kind: 'status', ...graphError(400, code, `(#${code}) Rate limit hit`) });
      expect(
        await failure(send.run({ to: '14155550123', text: 'hi' }, { config: config(), signal: signal() })),
      ).toMatchObject({
        status: 400,
        code: String(code),
        retryable: true,
      });
    }
  });
});

describe('Odoo connector', () => {
  const connector = odooConnector(http);
  const config = (overrides: Partial<OdooConfig> = {}): OdooConfig => ({
    url: odoo.url,
    database: odoo.database,
    username: odoo.username,
    api_key: odoo.apiKey,
    ...overrides,
  });

  it('tests with version and authenticate over JSON-RPC', async () => {
    const outcome = await connector.test({ config: config(), signal: signal() });
    expect(outcome.detail).toBe(`Connected to Odoo 17.0, database acme as ${odoo.username} (uid 2)`);
    const [version, auth] = odoo.requests.slice(-2).map((request) => request.json as Record<string, unknown>);
    expect(version).toMatchObject({
      jsonrpc: '2.0',
      method: 'call',
      params: { service: 'common', method: 'version', args: [] },
    });
    expect(auth).toMatchObject({
      jsonrpc: '2.0',
      method: 'call',
      params: { service: 'common', method: 'authenticate', args: ['acme', odoo.username, odoo.apiKey, {}] },
    });
    expect(typeof auth!.id).toBe('number');
  });

  it('fails the test when the credentials are refused, the database is unknown, on 429 and 5xx', async () => {
    const refused = await failure(
      connector.test({ config: config({ api_key: 'wrong-key-000000' }), signal: signal() }),
    );
    expect(refused).toMatchObject({ code: 'credentials_refused', retryable: false });
    expect(refused.message).toBe('Odoo: credentials refused (check the database, username and API key)');
    const noDb = await failure(connector.test({ config: config({ database: 'nope' }), signal: signal() }));
    expect(noDb.message).toContain('database "nope" does not exist');
    expect(noDb.message).not.toContain('Traceback');
    odoo.fail({ kind: 'status', status: 429, headers: { 'retry-after': '5' }, body: 'Too Many Requests' });
    expect(await failure(connector.test({ config: config(), signal: signal() }))).toMatchObject({
      status: 429,
      retryable: true,
      retryAfterMs: 5000,
    });
    odoo.fail({ kind: 'status', status: 502, body: '<html>502 Bad Gateway</html>' });
    expect(await failure(connector.test({ config: config(), signal: signal() }))).toMatchObject({
      status: 502,
      retryable: true,
    });
  });

  it('finds an invoice by number or customer with execute_kw search_read on account.move', async () => {
    const find = tool(connector, config(), 'find_invoice');
    expect(find.notification).toBe('tool_usage');
    const byNumber = await find.run({ number: 'INV/2025/00012' }, { config: config(), signal: signal() });
    expect(byNumber.summary).toBe('Invoice INV/2025/00012: not_paid, 1250.5 due of 1250.5');
    expect(byNumber.data).toEqual({
      invoices: [
        {
          number: 'INV/2025/00012',
          customer: 'Deco Addict',
          amount_total: 1250.5,
          amount_due: 1250.5,
          payment_state: 'not_paid',
          due_date: '2025-03-31',
          state: 'posted',
        },
      ],
    });
    const call = odoo.requests.at(-1)!.json as { params: { service: string; method: string; args: unknown[] } };
    expect(call.params).toMatchObject({ service: 'object', method: 'execute_kw' });
    expect(call.params.args.slice(0, 6)).toEqual([
      'acme',
      2,
      odoo.apiKey,
      'account.move',
      'search_read',
      [
        [
          ['move_type', '=', 'out_invoice'],
          ['name', '=', 'INV/2025/00012'],
        ],
      ],
    ]);
    expect(call.params.args[6]).toMatchObject({
      fields: expect.arrayContaining(['amount_residual', 'payment_state']),
      limit: 5,
    });
    const byPartner = await find.run({ partner: 'deco', limit: 50 }, { config: config(), signal: signal() });
    expect((byPartner.data as { invoices: unknown[] }).invoices).toHaveLength(1); // the vendor bill is not a customer invoice
    expect((odoo.requests.at(-1)!.json as { params: { args: unknown[] } }).params.args[6]).toMatchObject({ limit: 10 });
    expect((await find.run({ number: 'INV/1999/1' }, { config: config(), signal: signal() })).summary).toBe(
      'No invoice found for INV/1999/1',
    );
    expect(await failure(find.run({}, { config: config(), signal: signal() }))).toMatchObject({
      code: 'invalid_input',
    });
  });

  it('reuses the uid for a while instead of authenticating on every call', async () => {
    const stock = tool(connector, config(), 'product_stock');
    await stock.run({ query: 'lamp' }, { config: config(), signal: signal() });
    const before = odoo.calls.filter((call) => call === 'common.authenticate').length;
    await stock.run({ query: 'desk' }, { config: config(), signal: signal() });
    expect(odoo.calls.filter((call) => call === 'common.authenticate').length).toBe(before);
  });

  it('reads product stock by name or reference, and maps AccessError and AccessDenied', async () => {
    const stock = tool(connector, config(), 'product_stock');
    const byCode = await stock.run({ query: 'FURN_7777' }, { config: config(), signal: signal() });
    expect(byCode).toEqual({
      summary: 'Office Chair Black: 14 on hand, 10 forecast',
      data: {
        products: [{ name: 'Office Chair Black', reference: 'FURN_7777', on_hand: 14, forecast: 10, price: 120.5 }],
      },
    });
    const args = (odoo.requests.at(-1)!.json as { params: { args: unknown[] } }).params.args;
    expect(args[3]).toBe('product.product');
    expect(args[5]).toEqual([['|', ['name', 'ilike', 'FURN_7777'], ['default_code', '=', 'FURN_7777']]]);
    const byName = await stock.run({ query: 'desk' }, { config: config(), signal: signal() });
    expect((byName.data as { products: unknown[] }).products).toHaveLength(2);

    odoo.forbidden.add('product.product');
    const denied = await failure(stock.run({ query: 'desk' }, { config: config(), signal: signal() }));
    odoo.forbidden.delete('product.product');
    expect(denied).toMatchObject({ code: 'AccessError', retryable: false });
    expect(denied.message).toMatch(
      /^Odoo: the user lacks access rights to these records \(AccessError\): You are not allowed/,
    );
    expect(denied.message).not.toContain('Traceback');

    // A key revoked after the uid was cached: execute_kw answers AccessDenied.
    odoo.fail({
      kind: 'status',
      status: 200,
      body: {
        jsonrpc: '2.0',
        id: 1,
        error: {
          code: 200,
          message: 'Odoo Server Error',
          data: { name: 'odoo.exceptions.AccessDenied', message: 'Access Denied', debug: 'Traceback' },
        },
      },
    });
    const revoked = await failure(stock.run({ query: 'desk' }, { config: config(), signal: signal() }));
    expect(revoked).toMatchObject({ code: 'AccessDenied', retryable: false });
    const before = odoo.calls.filter((call) => call === 'common.authenticate').length;
    await stock.run({ query: 'desk' }, { config: config(), signal: signal() });
    expect(odoo.calls.filter((call) => call === 'common.authenticate').length).toBe(before + 1);
  });
});

describe('through the integrations family', () => {
  let t: TestApp;
  let tenant: TestTenant;
  beforeAll(async () => {
    t = await createTestApp({ ALLOW_PRIVATE_URLS: 'true', INTEGRATION_TIMEOUT_MS: '5000' });
    tenant = await createTenant(t.container);
  });
  afterAll(async () => {
    await t.close();
  });

  async function check(body: Record<string, unknown>) {
    const api = integrationsApi(t.app, tenant);
    const created = await api.create(body);
    expect(created.statusCode).toBe(201);
    const res = await api.test(created.json().id);
    expect(res.statusCode).toBe(200);
    return res.json() as { ok: boolean; detail: string; latency_ms: number };
  }

  it('runs the live check of each kind, ok and not ok, without leaking the secret', async () => {
    const waBody = (token: string) => ({
      name: 'WA',
      type: 'whatsapp',
      config: { access_token: token, phone_number_id: wa.phoneNumberId, base_url: wa.url },
    });
    expect(await check(waBody(wa.token))).toMatchObject({ ok: true, detail: expect.stringContaining('Acme Support') });
    const badWa = await check(waBody('EAAGbad-token-00000000000'));
    expect(badWa.ok).toBe(false);
    expect(badWa.detail).toContain('Graph error 190');
    expect(badWa.detail).not.toContain('EAAGbad');

    const odooBody = (api_key: string) => ({
      name: 'ERP',
      type: 'odoo',
      config: { url: odoo.url, database: odoo.database, username: odoo.username, api_key },
    });
    expect(await check(odooBody(odoo.apiKey))).toMatchObject({
      ok: true,
      detail: expect.stringContaining('Odoo 17.0'),
    });
    expect(await check(odooBody('wrong-odoo-key-00000'))).toMatchObject({
      ok: false,
      detail: 'Odoo: credentials refused (check the database, username and API key)',
    });

    const apiBody = (auth_token: string) => ({
      name: 'Orders',
      type: 'custom_api',
      config: {
        base_url: bearerApi.baseUrl,
        auth_type: 'bearer',
        auth_token,
        headers: { 'X-Tenant': 'acme' },
        operations: [{ name: 'ping', description: 'd', method: 'GET', path: '/' }],
      },
    });
    expect(await check(apiBody('custom-bearer-token-0001'))).toMatchObject({ ok: true });
    const badApi = await check(apiBody('custom-wrong-token-0001'));
    expect(badApi.ok).toBe(false);
    expect(badApi.detail).toContain('HTTP 401');
    expect(badApi.detail).not.toContain('custom-wrong-token-0001');
  });
});
