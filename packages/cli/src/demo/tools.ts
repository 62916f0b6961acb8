/**
 * A small shop as typed tools: six concurrency-safe reads and two exclusive
 * writes over one `Shop` instance. The model reads these as TypeScript
 * declarations (the PTC SDK), so descriptions say what matters to a program.
 */
import { defineTool, type ToolDefinition } from '@ptc/tools'
import { closedParameters } from './closed-parameters.js'
import { customerSpec, int, orderSpec, orderSummarySpec, productSpec, statusSpec, str, summary } from './schemas.js'
import { CATEGORIES, createShop, money, ORDER_STATUSES, STATUS_TRANSITIONS, type Shop } from './shop.js'

export interface ShopToolsOptions {
  /** The shop the tools read and write (default: a fresh `createShop()`). */
  shop?: Shop
  /** Simulated latency of a read in ms (writes take twice as long). Default 5. */
  latencyMs?: number
}

/** Resolves after `ms`, or rejects with the signal's reason when it aborts first. */
function delay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason)
    const onAbort = (): void => {
      clearTimeout(timer)
      reject(signal.reason)
    }
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    signal.addEventListener('abort', onAbort, { once: true })
  })
}

const clampLimit = (limit: number | undefined, fallback: number, max: number): number =>
  Math.max(1, Math.min(limit ?? fallback, max))

/** The shop's tools over one shop instance. */
export function shopTools(options: ShopToolsOptions = {}): ToolDefinition[] {
  const shop = options.shop ?? createShop()
  const read = options.latencyMs ?? 5
  const write = read * 2
  const safe = (): boolean => true

  const searchCustomers = defineTool({
    name: 'search_customers',
    description:
      'Find customers whose name, email or city contains `query` (case-insensitive; "" matches everyone). ' +
      'Sorted by id; at most `limit` (default 10, max 100).',
    parameters: { query: str, limit: { type: 'integer' } },
    output: {
      schema: { type: 'array', items: customerSpec },
      render: (args, hits) => [
        {
          type: 'text',
          text: [
            `${hits.length} customer(s) matching ${JSON.stringify(args.query)}`,
            ...hits.map((c) => `${c.id} ${c.name} <${c.email}> ${c.city}, ${c.country} (${c.tier})`),
          ].join('\n'),
        },
      ],
    },
    isConcurrencySafe: safe,
    execute: async ({ query, limit }, ctx) => {
      await delay(read, ctx.signal)
      const q = query.toLowerCase()
      return shop.customers
        .filter((c) => [c.name, c.email, c.city].some((f) => f.toLowerCase().includes(q)))
        .slice(0, clampLimit(limit, 10, 100))
        .map((c) => ({ ...c }))
    },
  })

  const getCustomer = defineTool({
    name: 'get_customer',
    description: 'One customer by id (e.g. "C001"). Fails for an unknown id.',
    parameters: { id: str },
    output: {
      schema: customerSpec,
      render: (_args, c) => [
        { type: 'text', text: `${c.id} ${c.name} <${c.email}> ${c.city}, ${c.country}; ${c.tier} since ${c.joinedAt}` },
      ],
    },
    isConcurrencySafe: safe,
    execute: async ({ id }, ctx) => {
      await delay(read, ctx.signal)
      return { ...shop.customer(id) }
    },
  })

  const listOrders = defineTool({
    name: 'list_orders',
    description:
      'Order summaries (no line items; use get_order), newest first. ' +
      'Filters: `customerId`, `status`, `since` (ISO date, inclusive, on placedAt). ' +
      'At most `limit` (default 50, max 200).',
    parameters: {
      customerId: { type: 'string' },
      status: { type: 'string', enum: ORDER_STATUSES },
      since: { type: 'string', description: 'ISO date, e.g. "2026-02-01"' },
      limit: { type: 'integer' },
    },
    output: {
      schema: { type: 'array', items: orderSummarySpec },
      render: (_args, orders) => [
        {
          type: 'text',
          text: [
            `${orders.length} order(s)`,
            ...orders.map(
              (o) =>
                `${o.id} ${o.customerId} ${o.placedAt.slice(0, 10)} ${o.status} ${money(o.totalCents)} ` +
                `(${o.itemCount} item(s), due ${o.expectedDeliveryAt})`,
            ),
          ].join('\n'),
        },
      ],
    },
    isConcurrencySafe: safe,
    execute: async ({ customerId, status, since, limit }, ctx) => {
      if (since !== undefined && !/^\d{4}-\d{2}-\d{2}$/.test(since))
        throw new Error(`since must be an ISO date like "2026-02-01", not ${JSON.stringify(since)}`)
      await delay(read, ctx.signal)
      return shop.orders
        .filter(
          (o) =>
            (customerId === undefined || o.customerId === customerId) &&
            (status === undefined || o.status === status) &&
            (since === undefined || o.placedAt.slice(0, 10) >= since),
        )
        .sort((a, b) => b.placedAt.localeCompare(a.placedAt))
        .slice(0, clampLimit(limit, 50, 200))
        .map(summary)
    },
  })

  const getOrder = defineTool({
    name: 'get_order',
    description:
      'One order by id (e.g. "O-1001") with its line items (product names included) and refund total. ' +
      'Fails for an unknown id.',
    parameters: { id: str },
    output: {
      schema: orderSpec,
      render: (_args, o) => [
        {
          type: 'text',
          text: [
            `${o.id} for ${o.customerId}, ${o.status}, total ${money(o.totalCents)}, ` +
              `refunded ${money(o.refundedCents)}`,
            ...o.items.map((i) => `  ${i.quantity} x ${i.sku} ${i.name} @ ${money(i.unitPriceCents)}`),
          ].join('\n'),
        },
      ],
    },
    isConcurrencySafe: safe,
    execute: async ({ id }, ctx) => {
      await delay(read, ctx.signal)
      const order = shop.order(id)
      return {
        ...summary(order),
        ...(order.shippedAt !== undefined && { shippedAt: order.shippedAt }),
        ...(order.deliveredAt !== undefined && { deliveredAt: order.deliveredAt }),
        refundedCents: order.refundedCents,
        items: order.items.map((i) => ({
          ...i,
          name: shop.product(i.sku).name,
          lineTotalCents: i.quantity * i.unitPriceCents,
        })),
      }
    },
  })

  const searchProducts = defineTool({
    name: 'search_products',
    description:
      'Products, sorted by SKU. All filters are optional: `query` (name or SKU contains, case-insensitive), ' +
      '`category`, `maxPrice` (unit price in cents, inclusive), `inStockOnly`.',
    parameters: {
      query: { type: 'string' },
      category: { type: 'string', enum: CATEGORIES },
      maxPrice: { type: 'integer', description: 'cents' },
      inStockOnly: { type: 'boolean' },
    },
    output: {
      schema: { type: 'array', items: productSpec },
      render: (_args, hits) => [
        {
          type: 'text',
          text: [
            `${hits.length} product(s)`,
            ...hits.map(
              (p) =>
                `${p.sku} ${p.name} [${p.category}] ${money(p.priceCents)}, ` +
                `${p.stock} in stock (reorder at ${p.reorderLevel})`,
            ),
          ].join('\n'),
        },
      ],
    },
    isConcurrencySafe: safe,
    execute: async ({ query, category, maxPrice, inStockOnly }, ctx) => {
      await delay(read, ctx.signal)
      const q = query?.toLowerCase()
      return shop.products
        .filter(
          (p) =>
            (q === undefined || p.name.toLowerCase().includes(q) || p.sku.toLowerCase().includes(q)) &&
            (category === undefined || p.category === category) &&
            (maxPrice === undefined || p.priceCents <= maxPrice) &&
            (inStockOnly !== true || p.stock > 0),
        )
        .sort((a, b) => a.sku.localeCompare(b.sku))
        .map((p) => ({ ...p }))
    },
  })

  const getProduct = defineTool({
    name: 'get_product',
    description: 'One product by SKU (e.g. "KB-101"). Fails for an unknown SKU.',
    parameters: { sku: str },
    output: {
      schema: productSpec,
      render: (_args, p) => [
        {
          type: 'text',
          text:
            `${p.sku} ${p.name} [${p.category}] ${money(p.priceCents)}, ` +
            `${p.stock} in stock (reorder at ${p.reorderLevel})`,
        },
      ],
    },
    isConcurrencySafe: safe,
    execute: async ({ sku }, ctx) => {
      await delay(read, ctx.signal)
      return { ...shop.product(sku) }
    },
  })

  const updateOrderStatus = defineTool({
    name: 'update_order_status',
    description:
      "Change an order's status. Allowed: pending->processing|cancelled, processing->shipped|delayed|cancelled, " +
      'shipped->delivered|delayed, delayed->shipped|delivered|cancelled. Runs alone (mutates).',
    parameters: { id: str, status: statusSpec },
    output: {
      schema: {
        type: 'object',
        additionalProperties: false,
        properties: { id: str, previousStatus: statusSpec, status: statusSpec },
      },
      render: (_args, v) => [{ type: 'text', text: `${v.id}: ${v.previousStatus} -> ${v.status}` }],
    },
    execute: async ({ id, status }, ctx) => {
      await delay(write, ctx.signal)
      // Check and write with no await in between.
      const order = shop.order(id)
      const previousStatus = order.status
      if (!STATUS_TRANSITIONS[previousStatus].includes(status))
        throw new Error(`order ${id} cannot go from ${previousStatus} to ${status}`)
      order.status = status
      return { id, previousStatus, status }
    },
  })

  const issueRefund = defineTool({
    name: 'issue_refund',
    description:
      "Refund part or all of an order (in cents) to the customer's original payment method. " +
      "Needs the user's approval; never more than the order total minus earlier refunds. Runs alone (mutates).",
    parameters: {
      orderId: str,
      amountCents: { ...int, description: 'positive, in euro cents' },
      reason: { ...str, description: 'shown to the customer' },
    },
    output: {
      schema: {
        type: 'object',
        additionalProperties: false,
        properties: {
          refundId: str,
          orderId: str,
          amountCents: int,
          refundedCents: { ...int, description: 'refunded on this order so far' },
          remainingCents: { ...int, description: 'still refundable' },
        },
      },
      render: (_args, v) => [
        {
          type: 'text',
          text:
            `refund ${v.refundId}: ${money(v.amountCents)} on ${v.orderId} ` +
            `(${money(v.remainingCents)} still refundable)`,
        },
      ],
    },
    execute: async ({ orderId, amountCents, reason }, ctx) => {
      await delay(write, ctx.signal)
      // Check and write with no await in between.
      const order = shop.order(orderId)
      const remaining = order.totalCents - order.refundedCents
      if (amountCents <= 0) throw new Error('amountCents must be positive')
      if (amountCents > remaining) throw new Error(`order ${orderId} has only ${money(remaining)} left to refund`)
      if (reason.trim() === '') throw new Error('a refund needs a reason')
      order.refundedCents += amountCents
      const refund = { id: `R-${String(shop.refunds.length + 1).padStart(4, '0')}`, orderId, amountCents, reason }
      shop.refunds.push(refund)
      return {
        refundId: refund.id,
        orderId,
        amountCents,
        refundedCents: order.refundedCents,
        remainingCents: order.totalCents - order.refundedCents,
      }
    },
  })

  return [
    searchCustomers,
    getCustomer,
    listOrders,
    getOrder,
    searchProducts,
    getProduct,
    updateOrderStatus,
    issueRefund,
  ].map(closedParameters)
}
