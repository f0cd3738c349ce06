/**
 * The Shopify Admin GraphQL queries the connector sends, and how their answers become tool
 * results. Search strings use Shopify's search syntax with every value quoted and escaped.
 */

export const SHOP_QUERY = 'query ShopName { shop { name } }';

export const ORDERS_QUERY = `query LookupOrders($query: String!, $first: Int!) {
  orders(first: $first, query: $query, sortKey: CREATED_AT, reverse: true) {
    nodes {
      name
      createdAt
      cancelledAt
      displayFinancialStatus
      displayFulfillmentStatus
      totalPriceSet { shopMoney { amount currencyCode } }
      fulfillments(first: 5) {
        status
        displayStatus
        trackingInfo(first: 5) { company number url }
      }
    }
  }
}`;

export const PRODUCTS_QUERY = `query SearchProducts($query: String!, $first: Int!) {
  products(first: $first, query: $query, sortKey: RELEVANCE) {
    nodes {
      title
      handle
      status
      totalInventory
      priceRangeV2 {
        minVariantPrice { amount currencyCode }
        maxVariantPrice { amount currencyCode }
      }
      variants(first: 10) { nodes { title sku price inventoryQuantity availableForSale } }
    }
  }
}`;

/** A value quoted for Shopify's search syntax (`"` and `\` escaped). */
export function quoted(value: string): string {
  return `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/** The orders search: `name:"#1042"` for a number, `email:"…"` for a customer, both when both are given. */
export function orderSearch(input: { order_number?: string; email?: string }): string {
  const terms: string[] = [];
  if (input.order_number) {
    const number = input.order_number.trim();
    terms.push(`name:${quoted(/^\d+$/.test(number) ? `#${number}` : number)}`);
  }
  if (input.email) terms.push(`email:${quoted(input.email.trim())}`);
  return terms.join(' AND ');
}

/** Free text of a product search with search-syntax characters removed, limited to active products. */
export function productSearch(text: string): string {
  const words = text
    .replace(/[:()"'\\*<>=!-]/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  return words ? `${words} status:active` : 'status:active';
}

interface Money {
  amount: string;
  currencyCode: string;
}

export interface OrderNode {
  name: string;
  createdAt: string;
  cancelledAt: string | null;
  displayFinancialStatus: string | null;
  displayFulfillmentStatus: string;
  totalPriceSet: { shopMoney: Money };
  fulfillments: {
    status: string;
    displayStatus: string | null;
    trackingInfo: { company: string | null; number: string | null; url: string | null }[];
  }[];
}

export interface ProductNode {
  title: string;
  handle: string;
  status: string;
  totalInventory: number | null;
  priceRangeV2: { minVariantPrice: Money; maxVariantPrice: Money };
  variants: {
    nodes: {
      title: string;
      sku: string | null;
      price: string;
      inventoryQuantity: number | null;
      availableForSale: boolean;
    }[];
  };
}

const money = (value: Money) => `${value.amount} ${value.currencyCode}`;

export function toOrder(node: OrderNode) {
  const tracking = node.fulfillments.flatMap((fulfillment) =>
    fulfillment.trackingInfo.map((info) => ({ company: info.company, number: info.number, url: info.url })),
  );
  return {
    order: node.name,
    created_at: node.createdAt,
    cancelled: node.cancelledAt !== null,
    payment_status: node.displayFinancialStatus,
    fulfillment_status: node.displayFulfillmentStatus,
    total: money(node.totalPriceSet.shopMoney),
    shipments: node.fulfillments.map((fulfillment) => fulfillment.displayStatus ?? fulfillment.status),
    tracking,
  };
}

export function orderSummary(orders: ReturnType<typeof toOrder>[], search: string): string {
  const first = orders[0];
  if (!first) return `No order found (${search})`;
  const track = first.tracking.find((info) => info.number);
  const tracking = track ? `, tracking ${[track.company, track.number].filter(Boolean).join(' ')}` : '';
  const more = orders.length > 1 ? ` (+${orders.length - 1} more)` : '';
  return `Order ${first.order}: ${first.cancelled ? 'CANCELLED' : first.fulfillment_status}${tracking}${more}`;
}

export function toProduct(node: ProductNode) {
  const { minVariantPrice: low, maxVariantPrice: high } = node.priceRangeV2;
  return {
    title: node.title,
    handle: node.handle,
    price: low.amount === high.amount ? money(low) : `${low.amount}–${money(high)}`,
    in_stock: node.totalInventory,
    variants: node.variants.nodes.map((variant) => ({
      title: variant.title,
      sku: variant.sku,
      price: variant.price,
      in_stock: variant.inventoryQuantity,
      available: variant.availableForSale,
    })),
  };
}
