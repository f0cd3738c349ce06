/**
 * A Shopify Admin GraphQL peer (`base_url` = its url): `POST /admin/api/{version}/graphql.json`
 * with `X-Shopify-Access-Token` (a bad one is HTTP 401 with Shopify's `{errors: "[API] …"}`),
 * a `{query, variables}` body, and answers for `shop { name }`, `orders(query:)` (search syntax
 * `name:"#1042"`, `email:"…"`) and `products(query:)`, each with `extensions.cost` as Shopify
 * sends it. `throttle()` makes the next answer a THROTTLED error with the bucket's state. Every
 * answer names the version served in `X-Shopify-API-Version`: the one asked for while it is
 * supported (twelve months from its release), else the oldest supported stable version, as
 * Shopify falls back.
 */
import { startVendorPeer, type PeerRequest, type VendorPeer } from './vendor-peer.js';

export interface FakeShopify extends VendorPeer {
  token: string;
  /** The next GraphQL answer is a THROTTLED error (HTTP 200), as Shopify sends when the bucket is empty. */
  throttle(): void;
}

const ORDERS = [
  {
    name: '#1042',
    email: 'dana@example.com',
    createdAt: '2026-01-10T09:00:00Z',
    cancelledAt: null,
    displayFinancialStatus: 'PAID',
    displayFulfillmentStatus: 'FULFILLED',
    totalPriceSet: { shopMoney: { amount: '59.90', currencyCode: 'EUR' } },
    fulfillments: [
      {
        status: 'SUCCESS',
        displayStatus: 'IN_TRANSIT',
        trackingInfo: [
          {
            company: 'UPS',
            number: '1Z999AA10123456784',
            url: 'https://www.ups.com/track?tracknum=1Z999AA10123456784',
          },
        ],
      },
    ],
  },
  {
    name: '#1043',
    email: 'dana@example.com',
    createdAt: '2026-01-12T09:00:00Z',
    cancelledAt: null,
    displayFinancialStatus: 'PAID',
    displayFulfillmentStatus: 'UNFULFILLED',
    totalPriceSet: { shopMoney: { amount: '12.00', currencyCode: 'EUR' } },
    fulfillments: [],
  },
];

const PRODUCTS = [
  {
    title: 'Blue Mug',
    handle: 'blue-mug',
    status: 'ACTIVE',
    totalInventory: 14,
    priceRangeV2: {
      minVariantPrice: { amount: '9.5', currencyCode: 'EUR' },
      maxVariantPrice: { amount: '9.5', currencyCode: 'EUR' },
    },
    variants: {
      nodes: [
        { title: 'Default Title', sku: 'MUG-BLUE', price: '9.50', inventoryQuantity: 14, availableForSale: true },
      ],
    },
  },
  {
    title: 'Red Teapot',
    handle: 'red-teapot',
    status: 'ACTIVE',
    totalInventory: 0,
    priceRangeV2: {
      minVariantPrice: { amount: '30.0', currencyCode: 'EUR' },
      maxVariantPrice: { amount: '35.0', currencyCode: 'EUR' },
    },
    variants: {
      nodes: [
        { title: '1 l', sku: 'TEA-1', price: '30.00', inventoryQuantity: 0, availableForSale: false },
        { title: '2 l', sku: 'TEA-2', price: '35.00', inventoryQuantity: 0, availableForSale: false },
      ],
    },
  },
];

const cost = (requested: number, available = 1990) => ({
  cost: {
    requestedQueryCost: requested,
    actualQueryCost: requested,
    throttleStatus: { maximumAvailable: 2000, currentlyAvailable: available, restoreRate: 100 },
  },
});

function term(search: string, field: string): string | undefined {
  const match = new RegExp(`${field}:"((?:[^"\\\\]|\\\\.)*)"`).exec(search);
  return match?.[1]?.replace(/\\(.)/g, '$1');
}

function answer(request: PeerRequest) {
  const { query, variables } = (request.json ?? {}) as { query?: string; variables?: Record<string, unknown> };
  if (typeof query !== 'string') return { errors: [{ message: 'Parse error: query is missing' }] };
  if (/\bshop\s*\{\s*name/.test(query)) return { data: { shop: { name: 'Acme Store' } }, extensions: cost(1) };
  const search = String(variables?.query ?? '');
  const first = variables?.first;
  if (typeof first !== 'number' || !Number.isInteger(first) || first < 1 || first > 250) {
    return {
      errors: [
        {
          message: 'Variable $first of type Int! was provided invalid value',
          extensions: { code: 'INVALID_VARIABLE' },
        },
      ],
    };
  }
  if (query.includes('orders(')) {
    const name = term(search, 'name');
    const email = term(search, 'email');
    const nodes = ORDERS.filter((order) => (!name || order.name === name) && (!email || order.email === email))
      .slice(0, first)
      .map(({ email: _email, ...order }) => order);
    return { data: { orders: { nodes } }, extensions: cost(12) };
  }
  if (query.includes('products(')) {
    const words = search.replace('status:active', '').trim().toLowerCase().split(/\s+/).filter(Boolean);
    const nodes = PRODUCTS.filter((product) => words.every((word) => product.title.toLowerCase().includes(word))).slice(
      0,
      first,
    );
    return { data: { products: { nodes } }, extensions: cost(22) };
  }
  return {
    errors: [{ message: "Field 'unknown' doesn't exist on type 'QueryRoot'", extensions: { code: 'undefinedField' } }],
  };
}

/** The version Shopify serves for the one in `path` (on today's date). */
function served(path: string): string {
  const asked = /^\/admin\/api\/([^/]+)\//.exec(path)![1]!;
  const match = /^(\d{4})-(\d{2})$/.exec(asked);
  if (!match) return asked;
  const now = new Date();
  const ends = Date.UTC(Number(match[1]) + 1, Number(match[2]) - 1, 1);
  if (ends > now.getTime()) return asked;
  // The oldest stable version still supported: released less than twelve months ago.
  const oldest = new Date(Date.UTC(now.getUTCFullYear() - 1, now.getUTCMonth() + 1, 1));
  const month = Math.ceil(oldest.getUTCMonth() / 3) * 3;
  const release = new Date(Date.UTC(oldest.getUTCFullYear(), month, 1));
  return `${release.getUTCFullYear()}-${String(release.getUTCMonth() + 1).padStart(2, '0')}`;
}

export async function startFakeShopify(token = 'shpat_0123456789abcdef0123456789abcdef'): Promise<FakeShopify> {
  let throttled = 0;
  const peer = await startVendorPeer((request) => {
    if (!/^\/admin\/api\/(\d{4}-\d{2}|unstable)\/graphql\.json$/.test(request.path) || request.method !== 'POST') {
      return { status: 404, body: { errors: 'Not Found' } };
    }
    if (request.headers['x-shopify-access-token'] !== token) {
      return {
        status: 401,
        body: { errors: '[API] Invalid API key or access token (unrecognized login or wrong password)' },
      };
    }
    if (throttled > 0) {
      throttled -= 1;
      return {
        status: 200,
        body: {
          errors: [
            {
              message: 'Throttled',
              extensions: { code: 'THROTTLED', documentation: 'https://shopify.dev/api/usage/rate-limits' },
            },
          ],
          extensions: {
            cost: {
              requestedQueryCost: 52,
              actualQueryCost: null,
              throttleStatus: { maximumAvailable: 2000, currentlyAvailable: 2, restoreRate: 100 },
            },
          },
        },
      };
    }
    return { status: 200, body: answer(request), headers: { 'x-shopify-api-version': served(request.path) } };
  });
  return Object.assign(peer, {
    token,
    throttle: () => {
      throttled += 1;
    },
  });
}
