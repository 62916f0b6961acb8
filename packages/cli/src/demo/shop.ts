/**
 * The shop's data and its in-memory state: `createShop()` loads a fresh,
 * mutable copy of `data.json`, so runs never leak state into each other.
 */
import data from './data.json' with { type: 'json' }

export const ORDER_STATUSES = ['pending', 'processing', 'shipped', 'delivered', 'delayed', 'cancelled'] as const
export type OrderStatus = (typeof ORDER_STATUSES)[number]

export const CATEGORIES = ['keyboards', 'mice', 'monitors', 'audio', 'cables'] as const
export type Category = (typeof CATEGORIES)[number]

export interface Customer {
  id: string
  name: string
  email: string
  city: string
  country: string
  tier: 'standard' | 'silver' | 'gold'
  joinedAt: string
}

export interface Product {
  sku: string
  name: string
  category: Category
  priceCents: number
  stock: number
  reorderLevel: number
}

export interface LineItem {
  sku: string
  quantity: number
  unitPriceCents: number
}

export interface Order {
  id: string
  customerId: string
  /** ISO date-time. */
  placedAt: string
  status: OrderStatus
  items: LineItem[]
  totalCents: number
  /** ISO date. */
  expectedDeliveryAt: string
  shippedAt?: string
  deliveredAt?: string
  refundedCents: number
}

export interface Refund {
  id: string
  orderId: string
  amountCents: number
  reason: string
}

export interface ShopData {
  /** The shop's "today" (ISO date): the data set is a snapshot as of this day. */
  asOf: string
  currency: string
  customers: Customer[]
  products: Product[]
  orders: Order[]
}

/** One shop instance: its own copy of the data plus the refunds issued so far. */
export interface Shop extends ShopData {
  readonly refunds: Refund[]
  customer(id: string): Customer
  product(sku: string): Product
  order(id: string): Order
}

/** Status changes the shop accepts (`update_order_status`). */
export const STATUS_TRANSITIONS: Readonly<Record<OrderStatus, readonly OrderStatus[]>> = {
  pending: ['processing', 'cancelled'],
  processing: ['shipped', 'delayed', 'cancelled'],
  shipped: ['delivered', 'delayed'],
  delayed: ['shipped', 'delivered', 'cancelled'],
  delivered: [],
  cancelled: [],
}

/** The pristine data set, checked once (JSON imports type `status` as `string`). */
export function shopData(): ShopData {
  const copy = structuredClone(data) as ShopData
  for (const order of copy.orders) {
    if (!(ORDER_STATUSES as readonly string[]).includes(order.status))
      throw new Error(`data.json: order ${order.id} has status ${order.status}`)
  }
  for (const product of copy.products) {
    if (!(CATEGORIES as readonly string[]).includes(product.category))
      throw new Error(`data.json: product ${product.sku} has category ${product.category}`)
  }
  return copy
}

/** A fresh shop over a mutable copy of `data.json`. */
export function createShop(): Shop {
  const seed = shopData()
  const find = <T>(items: readonly T[], match: (item: T) => boolean, what: string, hint: string): T => {
    const found = items.find(match)
    if (found === undefined) throw new Error(`${what} was not found (${hint})`)
    return found
  }
  return {
    ...seed,
    refunds: [],
    customer: (id) =>
      find(
        seed.customers,
        (c) => c.id === id,
        `customer ${JSON.stringify(id)}`,
        'ids look like "C001"; use search_customers to find one',
      ),
    product: (sku) =>
      find(
        seed.products,
        (p) => p.sku === sku,
        `product ${JSON.stringify(sku)}`,
        'SKUs look like "KB-101"; use search_products to find one',
      ),
    order: (id) =>
      find(
        seed.orders,
        (o) => o.id === id,
        `order ${JSON.stringify(id)}`,
        'ids look like "O-1001"; use list_orders to find one',
      ),
  }
}

/** `1234` -> `"€12.34"`. */
export function money(cents: number): string {
  return `€${(cents / 100).toFixed(2)}`
}
