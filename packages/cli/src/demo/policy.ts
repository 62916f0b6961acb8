/**
 * The shop's policy: every refund asks the user (a `tools/pre-execute`
 * listener answering `ask`), and a guard denies a refund larger than the
 * order's total whatever the user answered (guards are monotonic).
 */
import type { ToolsView } from '@ptc/tools'
import { money, type Shop } from './shop.js'

export interface ShopPolicyOptions {
  /** The shop whose order totals the refund guard checks. */
  shop: Shop
}

/** `exec.arguments` are a frozen JSON snapshot, not yet validated: read fields defensively. */
function field(args: unknown, key: string): unknown {
  return typeof args === 'object' && args !== null && !Array.isArray(args)
    ? (args as Record<string, unknown>)[key]
    : undefined
}

/** Registers the shop's approval rule and refund guard on `tools`. Returns the disposer of both. */
export function installShopPolicy(tools: ToolsView, { shop }: ShopPolicyOptions): () => void {
  const offAsk = tools.on('tools/pre-execute', (exec, next) => {
    if (exec.name !== 'issue_refund') return next()
    const amount = field(exec.arguments, 'amountCents')
    const orderId = field(exec.arguments, 'orderId')
    const what = typeof amount === 'number' ? money(amount) : 'a refund'
    return {
      kind: 'ask',
      reason: `refund ${what} on order ${String(orderId)}`,
      displayReason: { en: `Refund ${what} on order ${String(orderId)}?` },
    }
  })
  const offGuard = tools.guard((exec) => {
    if (exec.name !== 'issue_refund') return undefined
    const amount = field(exec.arguments, 'amountCents')
    const order = shop.orders.find((o) => o.id === field(exec.arguments, 'orderId'))
    if (order === undefined || typeof amount !== 'number') return undefined // the tool reports bad arguments itself
    return amount > order.totalCents
      ? `a refund of ${money(amount)} exceeds the total of order ${order.id} (${money(order.totalCents)})`
      : undefined
  })
  return () => {
    offAsk()
    offGuard()
  }
}
