/* eslint-disable @typescript-eslint/ban-ts-comment -- a run_code program body (top-level await and return), not a module; test/e2e/shop.test.ts type-checks it against the SDK */
// @ts-nocheck
// @description Refund the monitor Gareth Evans received damaged

// "The monitor I got arrived with a cracked screen." -- Gareth Evans
const [customer] = await tools.search_customers({ query: 'Gareth Evans' })
if (customer === undefined) return 'No customer named Gareth Evans.'

const [orders, monitors] = await Promise.all([
  tools.list_orders({ customerId: customer.id }),
  tools.search_products({ category: 'monitors' }),
])
const screens = new Set(monitors.filter((p) => p.name.includes('-inch')).map((p) => p.sku)) // not the monitor arm
const delivered = await Promise.all(orders.filter((o) => o.status === 'delivered').map((o) => tools.get_order({ id: o.id })))
const order = delivered.find((o) => o.items.some((item) => screens.has(item.sku))) // newest first
const line = order?.items.find((item) => screens.has(item.sku))
if (order === undefined || line === undefined) return `${customer.name} has no delivered order with a monitor.`

const refund = await tools.issue_refund({
  orderId: order.id,
  amountCents: line.unitPriceCents,
  reason: `${line.name} arrived damaged (cracked screen)`,
})
console.log(`Refunded €${(refund.amountCents / 100).toFixed(2)} to ${customer.name} for one ${line.name} on ${order.id}.`)
return refund
