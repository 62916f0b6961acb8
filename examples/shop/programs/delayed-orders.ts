/* eslint-disable @typescript-eslint/ban-ts-comment -- a run_code program body (top-level await and return), not a module; test/e2e/shop.test.ts type-checks it against the SDK */
// @ts-nocheck
// @description Find orders past their expected delivery date and mark them delayed

const today = '2026-03-20'
const [processing, shipped] = await Promise.all([
  tools.list_orders({ status: 'processing', limit: 200 }),
  tools.list_orders({ status: 'shipped', limit: 200 }),
])
const late = [...processing, ...shipped]
  .filter((o) => o.expectedDeliveryAt < today)
  .sort((a, b) => a.expectedDeliveryAt.localeCompare(b.expectedDeliveryAt) || a.id.localeCompare(b.id))

const marked: string[] = []
const failed: { id: string; error: string }[] = []
for (const order of late) {
  try {
    await tools.update_order_status({ id: order.id, status: 'delayed' })
    marked.push(order.id)
  } catch (error) {
    failed.push({ id: order.id, error: error instanceof ToolCallError ? error.message : String(error) })
  }
}
const oldest = late[0]
console.log(`${late.length} late order(s)${oldest ? `; the oldest was due ${oldest.expectedDeliveryAt} (${oldest.id})` : ''}`)
return { marked, failed }
