/**
 * Shopify Admin GraphQL API (e-commerce): `POST {root}/admin/api/{api_version}/graphql.json`
 * with `X-Shopify-Access-Token`. GraphQL failures come as HTTP 200 with `errors`; throttling is
 * an error with `extensions.code: THROTTLED` and the bucket in `extensions.cost.throttleStatus`
 * (retryable, after the time the bucket needs to refill); a bad token is HTTP 401.
 *
 * Versions: Shopify releases a stable Admin API version each quarter (`YYYY-01`, `-04`, `-07`,
 * `-10`) and supports each for twelve months; a request for a version past support is served by
 * the oldest supported one (named in `X-Shopify-API-Version`). The default is the previous
 * quarter's version, so it is always released and at least six months from the end of support;
 * the live check warns when the configured version is past support or was not the one served.
 */
import { Type } from '@sinclair/typebox';
import { ConnectorError, type ConnectorContext, type ConnectorDefinition } from '../../../ports/connectors.js';
import { BaseUrl, Email, SecretText } from '../fields.js';
import type { ConnectorHttp } from '../http.js';
import {
  ORDERS_QUERY,
  PRODUCTS_QUERY,
  SHOP_QUERY,
  orderSearch,
  orderSummary,
  productSearch,
  toOrder,
  toProduct,
  type OrderNode,
  type ProductNode,
} from './shopify.graphql.js';

export interface ShopifyConfig {
  shop_domain: string;
  access_token: string;
  api_version?: string;
  base_url?: string;
}

const VENDOR = 'Shopify';
/** The first day a stable version (`YYYY-MM`) is no longer supported: twelve months after its release. */
export function shopifySupportEnds(version: string): Date | undefined {
  const match = /^(\d{4})-(01|04|07|10)$/.exec(version);
  return match ? new Date(Date.UTC(Number(match[1]) + 1, Number(match[2]) - 1, 1)) : undefined;
}

/** The default version on `now`: the previous quarter's stable version (released, supported ≥ 6 months more). */
export function shopifyDefaultApiVersion(now: Date = new Date()): string {
  const quarter = Math.floor(now.getUTCMonth() / 3);
  const year = quarter === 0 ? now.getUTCFullYear() - 1 : now.getUTCFullYear();
  const month = quarter === 0 ? 10 : (quarter - 1) * 3 + 1;
  return `${year}-${String(month).padStart(2, '0')}`;
}

/** Why the version used is a problem, or undefined: past support, or another version was served. */
export function shopifyVersionWarning(requested: string, served: unknown, now: Date): string | undefined {
  const ends = shopifySupportEnds(requested);
  const advice = `set api_version to a supported one (e.g. ${shopifyDefaultApiVersion(now)}) or remove it`;
  if (ends && ends.getTime() <= now.getTime()) {
    return `API version ${requested} left Shopify's support on ${ends.toISOString().slice(0, 10)}; ${advice}`;
  }
  if (typeof served === 'string' && served && served !== requested) {
    return `Shopify served API version ${served}, not ${requested}; ${advice}`;
  }
  return undefined;
}

interface GraphqlError {
  message?: string;
  extensions?: { code?: string };
}

interface GraphqlAnswer<T> {
  data?: T | null;
  errors?: GraphqlError[] | string;
  extensions?: {
    cost?: {
      requestedQueryCost?: number;
      throttleStatus?: { maximumAvailable?: number; currentlyAvailable?: number; restoreRate?: number };
    };
  };
}

/** How long the throttle bucket needs before the query's cost is available again, in ms. */
export function throttleWaitMs(extensions: GraphqlAnswer<unknown>['extensions']): number | undefined {
  const cost = extensions?.cost;
  const status = cost?.throttleStatus;
  if (!cost?.requestedQueryCost || !status?.restoreRate) return undefined;
  const missing = cost.requestedQueryCost - (status.currentlyAvailable ?? 0);
  return Math.max(0, Math.ceil((missing / status.restoreRate) * 1000));
}

function graphqlError(answer: GraphqlAnswer<unknown>, status: number): ConnectorError {
  const errors = Array.isArray(answer.errors) ? answer.errors : [{ message: String(answer.errors) }];
  const codes = errors.map((error) => error.extensions?.code).filter((code): code is string => Boolean(code));
  const words = errors
    .map((error) => error.message)
    .filter(Boolean)
    .join('; ')
    .slice(0, 300);
  if (codes.includes('THROTTLED')) {
    return new ConnectorError(VENDOR, `throttled (query cost above the available limit): ${words}`, {
      status,
      code: 'THROTTLED',
      retryable: true,
      retryAfterMs: throttleWaitMs(answer.extensions),
    });
  }
  const code = codes[0];
  const retryable = code === 'INTERNAL_SERVER_ERROR' || code === 'SERVICE_UNAVAILABLE';
  const access = code === 'ACCESS_DENIED' ? ' (the access token lacks a scope: read_orders, read_products)' : '';
  return new ConnectorError(VENDOR, `GraphQL error${code ? ` ${code}` : ''}${access}: ${words || 'no message'}`, {
    status,
    code,
    retryable,
  });
}

export function shopifyConnector(
  http: ConnectorHttp,
  options: { now?: () => Date } = {},
): ConnectorDefinition<ShopifyConfig> {
  const now = options.now ?? (() => new Date());
  const versionOf = (config: ShopifyConfig) => config.api_version ?? shopifyDefaultApiVersion(now());

  async function graphql<T>(
    query: string,
    variables: Record<string, unknown>,
    context: ConnectorContext<ShopifyConfig>,
  ) {
    const { config } = context;
    const root = (config.base_url ?? `https://${config.shop_domain}`).replace(/\/+$/, '');
    const version = versionOf(config);
    const answer = await http.request({
      vendor: VENDOR,
      method: 'POST',
      url: `${root}/admin/api/${encodeURIComponent(version)}/graphql.json`,
      headers: { 'x-shopify-access-token': config.access_token },
      json: { query, variables },
      signal: context.signal,
    });
    const body = (answer.body ?? {}) as GraphqlAnswer<T>;
    if (body.errors && (!Array.isArray(body.errors) || body.errors.length > 0)) throw graphqlError(body, answer.status);
    if (!body.data)
      throw new ConnectorError(VENDOR, 'answer without data', { status: answer.status, retryable: false });
    return { data: body.data, served: answer.headers['x-shopify-api-version'], version };
  }

  return {
    type: 'shopify',
    name: VENDOR,
    description: 'E-commerce: look up an order (status, fulfilment, tracking) and search products (price, stock).',
    listed: true,
    secretKeys: ['access_token'],
    config: Type.Object(
      {
        shop_domain: Type.String({
          maxLength: 253,
          pattern: '^[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)+$',
          description: 'The shop domain, e.g. acme.myshopify.com.',
        }),
        access_token: SecretText('Admin API access token (shpat_…) with read_orders and read_products'),
        api_version: Type.Optional(
          Type.String({
            pattern: '^([0-9]{4}-(01|04|07|10)|unstable)$',
            description:
              "Admin API version (default: the previous quarter's stable version, always within Shopify's support).",
          }),
        ),
        base_url: BaseUrl('https://{shop_domain}'),
      },
      { additionalProperties: false },
    ),
    async test(context) {
      const { data, served, version } = await graphql<{ shop?: { name?: string } }>(SHOP_QUERY, {}, context);
      const warning = shopifyVersionWarning(version, served, now());
      return {
        detail: `Connected to Shopify shop ${data.shop?.name ?? context.config.shop_domain}${warning ? ` (warning: ${warning})` : ''}`,
      };
    },
    tools: () => [
      {
        name: 'lookup_order',
        description:
          "Look up a customer's order by its number (e.g. 1042 or #1042) or by the customer's e-mail: status, fulfilment and tracking.",
        input: Type.Object(
          {
            order_number: Type.Optional(
              Type.String({ pattern: '^#?[A-Za-z0-9-]{1,32}$', description: 'Order number or name.' }),
            ),
            email: Type.Optional(Email("The customer's e-mail address.")),
          },
          { additionalProperties: false, minProperties: 1 },
        ),
        notification: 'tool_usage',
        async run(input, context) {
          const search = orderSearch(input as { order_number?: string; email?: string });
          const { data } = await graphql<{ orders: { nodes: OrderNode[] } }>(
            ORDERS_QUERY,
            { query: search, first: 5 },
            context,
          );
          const orders = data.orders.nodes.map(toOrder);
          return { summary: orderSummary(orders, search), data: { orders } };
        },
      },
      {
        name: 'search_products',
        description: 'Search the shop’s active products by words: title, price and stock per variant.',
        input: Type.Object(
          {
            query: Type.String({ minLength: 1, maxLength: 200, description: 'Words to search for.' }),
            limit: Type.Optional(
              Type.Integer({ minimum: 1, maximum: 10, description: 'At most this many (default 5).' }),
            ),
          },
          { additionalProperties: false },
        ),
        notification: 'tool_usage',
        async run(input, context) {
          const first = typeof input.limit === 'number' ? input.limit : 5;
          const { data } = await graphql<{ products: { nodes: ProductNode[] } }>(
            PRODUCTS_QUERY,
            { query: productSearch(String(input.query)), first },
            context,
          );
          const products = data.products.nodes.map(toProduct);
          const summary = products.length
            ? `Found ${products.length} product(s): ${products
                .map((product) => product.title)
                .join(', ')
                .slice(0, 200)}`
            : `No product found for "${String(input.query).slice(0, 80)}"`;
          return { summary, data: { products } };
        },
      },
    ],
  };
}
