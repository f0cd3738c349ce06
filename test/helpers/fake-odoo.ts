/**
 * An Odoo JSON-RPC peer (`url` = its url): `POST /jsonrpc` with `{jsonrpc: "2.0", method: "call",
 * params: {service, method, args}, id}`. `common.version`, `common.authenticate` (db, login, key,
 * {}) → uid or false, `object.execute_kw` (db, uid, key, model, method, args, kwargs) with the
 * credentials checked again on every call (AccessDenied), a small domain evaluator for
 * `search_read` (`=`, `ilike`, `|`, many2one names), `fields`, `limit`, and access rights per
 * model (AccessError). Errors are HTTP 200 with Odoo's `{code: 200, message: "Odoo Server Error",
 * data: {name, message, arguments, debug}}`. Faults (429, 5xx, hangs) come from the vendor peer.
 */
import { startVendorPeer, type PeerAnswer, type PeerRequest, type VendorPeer } from './vendor-peer.js';

type Row = Record<string, unknown>;

export interface FakeOdoo extends VendorPeer {
  database: string;
  username: string;
  apiKey: string;
  uid: number;
  /** Models the user may not read (AccessError). */
  forbidden: Set<string>;
  /** Every JSON-RPC call received: service.method (and model.method for execute_kw). */
  calls: string[];
}

const PARTNERS: Record<number, string> = { 7: 'Deco Addict', 9: 'Azure Interior' };

const INVOICES: Row[] = [
  {
    id: 31,
    name: 'INV/2025/00012',
    move_type: 'out_invoice',
    partner_id: [7, PARTNERS[7]],
    amount_total: 1250.5,
    amount_residual: 1250.5,
    payment_state: 'not_paid',
    invoice_date: '2025-03-01',
    invoice_date_due: '2025-03-31',
    state: 'posted',
  },
  {
    id: 32,
    name: 'INV/2025/00013',
    move_type: 'out_invoice',
    partner_id: [9, PARTNERS[9]],
    amount_total: 480,
    amount_residual: 0,
    payment_state: 'paid',
    invoice_date: '2025-03-04',
    invoice_date_due: '2025-04-03',
    state: 'posted',
  },
  {
    id: 33,
    name: 'BILL/2025/00004',
    move_type: 'in_invoice',
    partner_id: [7, PARTNERS[7]],
    amount_total: 99,
    amount_residual: 99,
    payment_state: 'not_paid',
    invoice_date: '2025-03-05',
    invoice_date_due: '2025-04-04',
    state: 'posted',
  },
];

const PRODUCTS: Row[] = [
  {
    id: 11,
    name: 'Office Chair Black',
    default_code: 'FURN_7777',
    qty_available: 14,
    virtual_available: 10,
    list_price: 120.5,
  },
  { id: 12, name: 'Desk Lamp', default_code: 'LAMP_0001', qty_available: 0, virtual_available: 25, list_price: 35 },
  { id: 13, name: 'Large Desk', default_code: false, qty_available: 3, virtual_available: 3, list_price: 480 },
];

const TABLES: Record<string, Row[]> = { 'account.move': INVOICES, 'product.product': PRODUCTS };

function serverError(name: string, message: string): { code: number; message: string; data: Row } {
  return {
    code: 200,
    message: 'Odoo Server Error',
    data: {
      name,
      debug: `Traceback (most recent call last):\n  File "/odoo/http.py", line 1, in dispatch\n${name}: ${message}\n`,
      message,
      arguments: [message],
      context: {},
    },
  };
}

function matches(row: Row, leaf: unknown[]): boolean {
  const [field, operator, value] = leaf as [string, string, unknown];
  let actual = row[field];
  if (Array.isArray(actual)) actual = operator === 'ilike' ? actual[1] : actual[0];
  if (operator === '=') return actual === value;
  if (operator === 'ilike')
    return typeof actual === 'string' && actual.toLowerCase().includes(String(value).toLowerCase());
  throw new Error(`Invalid leaf ${JSON.stringify(leaf)}`);
}

/** Odoo's prefix-notation domains: implicit `&` between terms, `|` and `&` as prefix operators. */
function evaluate(row: Row, domain: unknown[]): boolean {
  const stack: boolean[] = [];
  for (let index = domain.length - 1; index >= 0; index--) {
    const term = domain[index];
    if (term === '|' || term === '&') {
      const a = stack.pop()!;
      const b = stack.pop()!;
      stack.push(term === '|' ? a || b : a && b);
    } else if (Array.isArray(term)) {
      stack.push(matches(row, term));
    } else throw new Error(`Invalid domain term ${JSON.stringify(term)}`);
  }
  return stack.every(Boolean);
}

export async function startFakeOdoo(
  database = 'acme',
  username = 'api@acme.test',
  apiKey = 'odoo-peer-api-key-0000000000000001',
): Promise<FakeOdoo> {
  const uid = 2;
  const forbidden = new Set<string>();
  const calls: string[] = [];
  const peer = await startVendorPeer((request: PeerRequest): PeerAnswer => {
    if (request.path !== '/jsonrpc') return { status: 404, body: '<!doctype html><title>404: Not Found</title>' };
    if (request.method !== 'POST') return { status: 405, body: 'Method Not Allowed' };
    const body = request.json as { jsonrpc?: unknown; method?: unknown; params?: Row; id?: unknown } | undefined;
    const id = body?.id ?? null;
    const reply = (payload: { result: unknown } | { error: unknown }): PeerAnswer => ({
      status: 200,
      body: { jsonrpc: '2.0', id, ...payload },
    });
    if (!body || body.jsonrpc !== '2.0' || body.method !== 'call' || !body.params) {
      return reply({
        error: {
          code: 400,
          message: 'Odoo Session Invalid Request',
          data: {
            name: 'werkzeug.exceptions.BadRequest',
            message: 'Invalid JSON-RPC request',
            arguments: [],
            debug: '',
          },
        },
      });
    }
    const { service, method, args } = body.params as { service?: string; method?: string; args?: unknown[] };
    calls.push(`${service}.${method}`);
    const list = Array.isArray(args) ? args : [];
    if (service === 'common' && method === 'version') {
      return reply({
        result: {
          server_version: '17.0',
          server_version_info: [17, 0, 0, 'final', 0, ''],
          server_serie: '17.0',
          protocol_version: 1,
        },
      });
    }
    if (service === 'common' && (method === 'authenticate' || method === 'login')) {
      const [db, login, key] = list;
      if (db !== database)
        return reply({
          error: serverError(
            'psycopg2.OperationalError',
            `connection to server failed: FATAL:  database "${String(db)}" does not exist`,
          ),
        });
      return reply({ result: login === username && key === apiKey ? uid : false });
    }
    if (service === 'object' && method === 'execute_kw') {
      const [db, user, key, model, modelMethod, modelArgs, kwargs] = list as [
        unknown,
        unknown,
        unknown,
        string,
        string,
        unknown[],
        Row,
      ];
      calls.push(`${model}.${modelMethod}`);
      if (db !== database || user !== uid || key !== apiKey) {
        return reply({ error: serverError('odoo.exceptions.AccessDenied', 'Access Denied') });
      }
      const table = TABLES[model];
      if (!table) return reply({ error: serverError('builtins.KeyError', `'${model}'`) });
      if (forbidden.has(model)) {
        return reply({
          error: serverError(
            'odoo.exceptions.AccessError',
            `You are not allowed to access '${model}' records.\n\nThis operation is allowed for the following groups:\n\t- Inventory/User`,
          ),
        });
      }
      if (modelMethod !== 'search_read') {
        return reply({
          error: serverError(
            'builtins.AttributeError',
            `The method '${modelMethod}' does not exist on the model '${model}'`,
          ),
        });
      }
      try {
        const domain = (Array.isArray(modelArgs?.[0]) ? modelArgs[0] : []) as unknown[];
        const fields = Array.isArray(kwargs?.fields) ? (kwargs.fields as string[]) : Object.keys(table[0] ?? {});
        const limit = typeof kwargs?.limit === 'number' ? kwargs.limit : undefined;
        const found = table.filter((row) => evaluate(row, domain)).slice(0, limit);
        return reply({
          result: found.map((row) =>
            Object.fromEntries([['id', row.id], ...fields.map((field) => [field, row[field] ?? false])]),
          ),
        });
      } catch (error) {
        return reply({ error: serverError('builtins.ValueError', (error as Error).message) });
      }
    }
    return reply({
      error: serverError('builtins.NameError', `service ${String(service)} or method ${String(method)} not found`),
    });
  });
  return Object.assign(peer, { database, username, apiKey, uid, forbidden, calls });
}
