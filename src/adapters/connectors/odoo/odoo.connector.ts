/**
 * Odoo external API over JSON-RPC (ERP, not listed): `POST {url}/jsonrpc` with
 * `{jsonrpc: "2.0", method: "call", params: {service, method, args}, id}`. `common.authenticate`
 * (db, login, API key, {}) gives the uid (false when refused), `object.execute_kw` (db, uid, key,
 * model, method, args, kwargs) reads records. Odoo answers errors with HTTP 200 and a JSON-RPC
 * `error` `{code: 200, message: "Odoo Server Error", data: {name, message, debug}}`; `data.name`
 * says what happened (`odoo.exceptions.AccessDenied` refused credentials, `AccessError` missing
 * rights …). The debug traceback is never passed on. The uid is cached a short while per
 * credentials, keyed by a hash (never the key in clear).
 */
import { createHash } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import { ConnectorError, type ConnectorContext, type ConnectorDefinition } from '../../../ports/connectors.js';
import { HttpUrl, SecretText, Text } from '../fields.js';
import type { ConnectorHttp } from '../http.js';

export interface OdooConfig {
  url: string;
  database: string;
  username: string;
  api_key: string;
}

const VENDOR = 'Odoo';
const UID_TTL_MS = 5 * 60_000;
const MAX_CACHED = 1000;
const MAX_RESULTS = 10;

interface RpcError {
  code?: number;
  message?: string;
  data?: { name?: string; message?: string; debug?: string };
}

const FINAL_HINTS: Record<string, string> = {
  AccessDenied: 'the database, username or API key was refused',
  AccessError: 'the user lacks access rights to these records',
  MissingError: 'a record does not exist',
  UserError: 'the request was refused',
  ValidationError: 'the request was refused',
};

/** The ConnectorError of a JSON-RPC `error` object. */
export function odooError(error: RpcError): ConnectorError {
  const fullName = typeof error.data?.name === 'string' ? error.data.name : '';
  const name = fullName.split('.').pop() ?? '';
  const words = (error.data?.message || error.message || 'no message').replace(/\s+/g, ' ').slice(0, 300);
  const hint = FINAL_HINTS[name];
  const retryable = /SerializationFailure|ConcurrencyError|LockNotAvailable/.test(fullName);
  return new ConnectorError(
    VENDOR,
    `${hint ?? (retryable ? 'a concurrent update got in the way' : 'server error')}${name ? ` (${name})` : ''}: ${words}`,
    { retryable, code: name || String(error.code ?? 'error') },
  );
}

const FindInvoiceInput = Type.Object(
  {
    number: Type.Optional(
      Type.String({
        pattern: '^[A-Za-z0-9][A-Za-z0-9/._ -]{0,63}$',
        description: 'Invoice number, e.g. INV/2025/00012.',
      }),
    ),
    partner: Type.Optional(Type.String({ minLength: 2, maxLength: 200, description: "The customer's name." })),
    limit: Type.Optional(
      Type.Integer({ minimum: 1, maximum: MAX_RESULTS, description: 'At most this many (default 5).' }),
    ),
  },
  { additionalProperties: false },
);

const ProductStockInput = Type.Object(
  {
    query: Type.String({
      minLength: 1,
      maxLength: 200,
      description: 'Product name (or part of it) or internal reference.',
    }),
    limit: Type.Optional(
      Type.Integer({ minimum: 1, maximum: MAX_RESULTS, description: 'At most this many (default 5).' }),
    ),
  },
  { additionalProperties: false },
);

function limitOf(input: Record<string, unknown>): number {
  const limit = Number(input.limit ?? 5);
  return Number.isInteger(limit) ? Math.min(Math.max(limit, 1), MAX_RESULTS) : 5;
}

/** A many2one value `[id, "Name"]` as its name. */
function nameOf(value: unknown): string | null {
  return Array.isArray(value) && typeof value[1] === 'string' ? value[1] : null;
}

export function odooConnector(http: ConnectorHttp): ConnectorDefinition<OdooConfig> {
  const uids = new Map<string, { uid: number; until: number }>();
  let nextId = 1;

  const cacheKey = (config: OdooConfig) =>
    createHash('sha256')
      .update(JSON.stringify([config.url.replace(/\/+$/, ''), config.database, config.username, config.api_key]))
      .digest('hex');

  async function rpc(service: string, method: string, args: unknown[], context: ConnectorContext<OdooConfig>) {
    const id = nextId++;
    const answer = await http.request({
      vendor: VENDOR,
      method: 'POST',
      url: `${context.config.url.replace(/\/+$/, '')}/jsonrpc`,
      json: { jsonrpc: '2.0', method: 'call', params: { service, method, args }, id },
      signal: context.signal,
      errorMessage: (body) => {
        const error = (body as { error?: RpcError } | undefined)?.error;
        return error?.data?.message ?? error?.message;
      },
    });
    const body = answer.body as { result?: unknown; error?: RpcError } | undefined;
    if (!body || typeof body !== 'object' || (!('result' in body) && !body.error)) {
      throw new ConnectorError(VENDOR, 'unexpected answer (not a JSON-RPC response)', {
        status: answer.status,
        retryable: false,
      });
    }
    if (body.error) throw odooError(body.error);
    return body.result;
  }

  async function authenticate(context: ConnectorContext<OdooConfig>): Promise<number> {
    const { config } = context;
    const uid = await rpc('common', 'authenticate', [config.database, config.username, config.api_key, {}], context);
    if (typeof uid !== 'number' || uid <= 0) {
      throw new ConnectorError(VENDOR, 'credentials refused (check the database, username and API key)', {
        retryable: false,
        code: 'credentials_refused',
      });
    }
    const key = cacheKey(config);
    uids.delete(key);
    if (uids.size >= MAX_CACHED) uids.delete(uids.keys().next().value!);
    uids.set(key, { uid, until: Date.now() + UID_TTL_MS });
    return uid;
  }

  async function uidFor(context: ConnectorContext<OdooConfig>): Promise<number> {
    const cached = uids.get(cacheKey(context.config));
    if (cached && cached.until > Date.now()) return cached.uid;
    return authenticate(context);
  }

  async function searchRead(
    model: string,
    domain: unknown[],
    kwargs: Record<string, unknown>,
    context: ConnectorContext<OdooConfig>,
  ): Promise<Record<string, unknown>[]> {
    const { config } = context;
    const uid = await uidFor(context);
    try {
      const result = await rpc(
        'object',
        'execute_kw',
        [config.database, uid, config.api_key, model, 'search_read', [domain], kwargs],
        context,
      );
      if (!Array.isArray(result))
        throw new ConnectorError(VENDOR, 'search_read answered with something other than a list', { retryable: false });
      return result as Record<string, unknown>[];
    } catch (error) {
      if (error instanceof ConnectorError && error.code === 'AccessDenied') uids.delete(cacheKey(config));
      throw error;
    }
  }

  return {
    type: 'odoo',
    name: 'Odoo',
    description: "ERP: look up an invoice or a product's stock.",
    listed: false,
    secretKeys: ['api_key'],
    config: Type.Object(
      {
        url: HttpUrl('The Odoo server root; calls go to {url}/jsonrpc.'),
        database: Text(200, { description: 'The Odoo database name.' }),
        username: Text(320, { description: 'The login the API key belongs to.' }),
        api_key: SecretText('Odoo API key'),
      },
      { additionalProperties: false },
    ),
    async test(context) {
      const version = (await rpc('common', 'version', [], context)) as { server_version?: unknown } | null;
      const uid = await authenticate(context);
      const server = typeof version?.server_version === 'string' ? ` ${version.server_version}` : '';
      return {
        detail: `Connected to Odoo${server}, database ${context.config.database} as ${context.config.username} (uid ${uid})`,
      };
    },
    tools: () => [
      {
        name: 'find_invoice',
        description:
          "Look up a customer invoice by its number (e.g. INV/2025/00012) or by the customer's name: amount, amount due, payment state and due date.",
        input: FindInvoiceInput,
        notification: 'tool_usage',
        async run(input, context) {
          const number = typeof input.number === 'string' ? input.number.trim() : '';
          const partner = typeof input.partner === 'string' ? input.partner.trim() : '';
          if (!number && !partner) {
            throw new ConnectorError(VENDOR, 'give an invoice number or a customer name', {
              retryable: false,
              code: 'invalid_input',
            });
          }
          const domain: unknown[] = [['move_type', '=', 'out_invoice']];
          if (number) domain.push(['name', '=', number]);
          if (partner) domain.push(['partner_id', 'ilike', partner]);
          const rows = await searchRead(
            'account.move',
            domain,
            {
              fields: [
                'name',
                'partner_id',
                'amount_total',
                'amount_residual',
                'payment_state',
                'invoice_date_due',
                'state',
              ],
              limit: limitOf(input),
              order: 'invoice_date desc, id desc',
            },
            context,
          );
          const invoices = rows.map((row) => ({
            number: row.name ?? null,
            customer: nameOf(row.partner_id),
            amount_total: row.amount_total ?? null,
            amount_due: row.amount_residual ?? null,
            payment_state: row.payment_state ?? null,
            due_date: row.invoice_date_due || null,
            state: row.state ?? null,
          }));
          const first = invoices[0];
          const summary = !first
            ? `No invoice found for ${number || partner}`
            : invoices.length === 1
              ? `Invoice ${String(first.number)}: ${String(first.payment_state)}, ${String(first.amount_due)} due of ${String(first.amount_total)}`
              : `${invoices.length} invoices found for ${number || partner}`;
          return { summary, data: { invoices } };
        },
      },
      {
        name: 'product_stock',
        description:
          'Look up products by name or internal reference: quantity on hand, forecast quantity and sales price.',
        input: ProductStockInput,
        notification: 'tool_usage',
        async run(input, context) {
          const query = typeof input.query === 'string' ? input.query.trim() : '';
          if (!query)
            throw new ConnectorError(VENDOR, 'give a product name or reference', {
              retryable: false,
              code: 'invalid_input',
            });
          const rows = await searchRead(
            'product.product',
            ['|', ['name', 'ilike', query], ['default_code', '=', query]],
            {
              fields: ['name', 'default_code', 'qty_available', 'virtual_available', 'list_price'],
              limit: limitOf(input),
            },
            context,
          );
          const products = rows.map((row) => ({
            name: row.name ?? null,
            reference: row.default_code || null,
            on_hand: row.qty_available ?? null,
            forecast: row.virtual_available ?? null,
            price: row.list_price ?? null,
          }));
          const first = products[0];
          const summary = !first
            ? `No product found for ${query}`
            : products.length === 1
              ? `${String(first.name)}: ${String(first.on_hand)} on hand, ${String(first.forecast)} forecast`
              : `${products.length} products found for ${query}`;
          return { summary, data: { products } };
        },
      },
    ],
  };
}
