/* eslint-disable @typescript-eslint/ban-ts-comment -- a run_code program body (top-level await and return), not a module; test/e2e/shop.test.ts type-checks it against the SDK */
// @ts-nocheck
// @description Top 3 customers by 2026 spend, with their latest order

// Spend = totals of every 2026 order that was not cancelled.
const orders = await tools.list_orders({ since: '2026-01-01', limit: 200 })
const spend = new Map<string, number>()
for (const order of orders) {
  if (order.status === 'cancelled') continue
  spend.set(order.customerId, (spend.get(order.customerId) ?? 0) + order.totalCents)
}
const top = [...spend].sort((a, b) => b[1] - a[1]).slice(0, 3)

// list_orders is newest first, so each customer's first hit is their latest order.
const rows = await Promise.all(
  top.map(async ([customerId, spentCents]) => {
    const latestId = orders.find((o) => o.customerId === customerId)?.id ?? ''
    const [customer, latest] = await Promise.all([tools.get_customer({ id: customerId }), tools.get_order({ id: latestId })])
    return {
      customer: `${customer.name} (${customer.id})`,
      spent: `€${(spentCents / 100).toFixed(2)}`,
      spentCents,
      latestOrder: {
        id: latest.id,
        placedAt: latest.placedAt.slice(0, 10),
        status: latest.status,
        items: latest.items.map((item) => `${item.quantity} x ${item.name}`),
      },
    }
  }),
)
console.log(`Scanned ${orders.length} orders from ${spend.size} customers.`)
return rows
