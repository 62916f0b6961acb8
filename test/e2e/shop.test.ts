/**
 * The shop example end to end over the real QuickJS backend: each model-style
 * program runs as one `run_code` call through the PTC executor, and its answer
 * is checked against `data.json` computed independently here.
 */
import {
  byteFigures,
  contentBytes,
  createShop,
  installShopPolicy,
  shopData,
  shopTools,
  subCallsOf,
  type Shop,
} from '@ptc/cli'
import { createPtcExecutor, sdkText } from '@ptc/ptc'
import type { CodeRuntime } from '@ptc/sandbox'
import { createQuickJSRuntime } from '@ptc/sandbox-quickjs'
import {
  MemorySession,
  ToolsService,
  type Agent,
  type ApprovalOutcome,
  type ApprovalRequest,
  type JsonValue,
  type SessionEvent,
  type ToolExecutionResult,
} from '@ptc/tools'
import ts from 'typescript'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { loadProgram, SHOP_PROGRAMS, type ShopProgramName } from '../../examples/shop/programs.js'

/** The pristine data set, read independently of any shop instance. */
const data = shopData()

let runtime: CodeRuntime
beforeAll(() => {
  runtime = createQuickJSRuntime({ poolSize: 2 })
})
afterAll(async () => {
  await runtime.dispose()
})

interface ShopRun {
  readonly result: ToolExecutionResult
  /** The run's canonical value `{ logs, result? }` (throws if the run failed). */
  readonly value: { logs: string[]; result?: JsonValue }
  readonly events: readonly SessionEvent[]
}

interface ShopHarness {
  readonly shop: Shop
  readonly approvals: ApprovalRequest[]
  run(code: string, description?: string): Promise<ShopRun>
  program(name: ShopProgramName): Promise<ShopRun>
}

/** A fresh shop, its tools and policy, an approval service answering `answer`, and a PTC executor over QuickJS. */
function shopHarness({
  answer = 'allowed-once',
  latencyMs = 2,
}: {
  answer?: ApprovalOutcome
  latencyMs?: number
} = {}): ShopHarness {
  const shop = createShop()
  const approvals: ApprovalRequest[] = []
  const approval = {
    request: async (request: ApprovalRequest): Promise<ApprovalOutcome> => {
      approvals.push(request)
      return answer
    },
  }
  const tools = new ToolsService({ approval })
  for (const tool of shopTools({ shop, latencyMs })) tools.register(tool)
  installShopPolicy(tools, { shop })
  tools.setExecutor(createPtcExecutor({ runtime, mode: 'code' }))
  const session = new MemorySession()
  const agent: Agent = { id: 'shop-agent', session }
  let n = 0
  const run = async (code: string, description = 'shop program'): Promise<ShopRun> => {
    const id = `run${++n}`
    const from = session.events.length
    const batch = await tools.execute({
      calls: [{ type: 'tool_call', id, name: 'run_code', arguments: JSON.stringify({ code, description }) }],
      signal: new AbortController().signal,
      agent,
      log: { turn: 1, step: n },
    })
    const result = batch.results[0]?.result
    if (result === undefined) throw new Error('no run_code result')
    return {
      result,
      get value() {
        if (result.isError)
          throw new Error(`run_code failed: ${result.content.map((b) => (b.type === 'text' ? b.text : '')).join('\n')}`)
        return result.value as { logs: string[]; result?: JsonValue }
      },
      events: session.events.slice(from),
    }
  }
  return { shop, approvals, run, program: (name) => run(loadProgram(name).code, loadProgram(name).description) }
}

/** Every sub-call of the run has exactly one start and one settle, ids `<runId>:ptc:1..n` in order. */
function expectCompleteLog(events: readonly SessionEvent[], runId: string, expectedCalls: number): void {
  const starts = events.filter((e) => e.type === 'tool/ptc-dispatch-start')
  const settles = events.filter((e) => e.type === 'tool/ptc-dispatch')
  const ids = Array.from({ length: expectedCalls }, (_, i) => `${runId}:ptc:${i + 1}`)
  expect(starts.map((e) => e.subCallId)).toEqual(ids)
  expect([...settles.map((e) => e.subCallId)].sort()).toEqual([...ids].sort())
  for (const e of [...starts, ...settles]) expect(e).toMatchObject({ rootCallId: runId, parentCallId: runId })
  // Each settle comes after its own start in the log.
  for (const id of ids)
    expect(events.findIndex((e) => e.type === 'tool/ptc-dispatch' && e.subCallId === id)).toBeGreaterThan(
      events.findIndex((e) => e.type === 'tool/ptc-dispatch-start' && e.subCallId === id),
    )
  expect(subCallsOf(events, runId).every((c) => c.settledAt !== undefined)).toBe(true)
}

const productName = (sku: string): string => data.products.find((p) => p.sku === sku)?.name ?? `?${sku}`
const newestFirst = <T extends { placedAt: string }>(orders: T[]): T[] =>
  [...orders].sort((a, b) => b.placedAt.localeCompare(a.placedAt))

describe('the shop programs over QuickJS', () => {
  test('top customers: the 3 largest 2026 spenders with their latest order, and most result bytes stay in the sandbox', async () => {
    const spend = new Map<string, number>()
    for (const o of data.orders)
      if (o.status !== 'cancelled' && o.placedAt >= '2026-01-01')
        spend.set(o.customerId, (spend.get(o.customerId) ?? 0) + o.totalCents)
    const expected = [...spend]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 3)
      .map(([id, cents]) => {
        const customer = data.customers.find((c) => c.id === id)
        const latest = newestFirst(data.orders.filter((o) => o.customerId === id))[0]
        return {
          customer: `${customer?.name} (${id})`,
          spentCents: cents,
          latestOrder: {
            id: latest?.id,
            placedAt: latest?.placedAt.slice(0, 10),
            status: latest?.status,
            items: latest?.items.map((i) => `${i.quantity} x ${productName(i.sku)}`),
          },
        }
      })

    const h = shopHarness()
    const run = await h.program('top-customers')
    expect(run.value.result).toMatchObject(expected)
    expect(run.value.logs).toEqual([`Scanned ${data.orders.length} orders from ${spend.size} customers.`])
    expectCompleteLog(run.events, 'run1', 1 + 2 * 3)

    // What stayed inside vs. what the model read.
    const subCalls = subCallsOf(run.events, 'run1')
    const inSandbox = run.events
      .filter((e) => e.type === 'tool/ptc-dispatch')
      .reduce((sum, e) => sum + contentBytes(e.content), 0)
    const toModel = run.result.content.reduce((sum, b) => sum + (b.type === 'text' ? Buffer.byteLength(b.text) : 0), 0)
    expect(byteFigures(subCalls, run.result.content)).toEqual({ inSandbox, toModel })
    expect(inSandbox).toBeGreaterThan(toModel * 3)
    // None of the sub-call results entered the model's context: not one order line of list_orders.
    const text = run.result.content.map((b) => (b.type === 'text' ? b.text : '')).join('\n')
    expect(text).not.toMatch(/\d+ order\(s\)/)
  })

  test('low stock: per category, the products at or below their reorder level, fetched with parallel calls', async () => {
    const categories = ['keyboards', 'mice', 'monitors', 'audio', 'cables']
    const expected = Object.fromEntries(
      categories.map((category) => [
        category,
        data.products
          .filter((p) => p.category === category && p.stock <= p.reorderLevel)
          .sort((a, b) => a.stock - b.stock || a.sku.localeCompare(b.sku))
          .map(({ sku, name, stock, reorderLevel }) => ({ sku, name, stock, reorderLevel })),
      ]),
    )
    const h = shopHarness({ latencyMs: 50 }) // wide enough that every start precedes the first settle
    const run = await h.program('low-stock')
    expect(run.value.result).toEqual(expected)
    expectCompleteLog(run.events, 'run1', categories.length)
    // All five safe calls started before the first one settled.
    const firstSettle = run.events.findIndex((e) => e.type === 'tool/ptc-dispatch')
    expect(run.events.slice(0, firstSettle).filter((e) => e.type === 'tool/ptc-dispatch-start')).toHaveLength(
      categories.length,
    )
  })

  test('delayed orders: every late processing or shipped order is marked delayed, one exclusive write at a time', async () => {
    const late = data.orders
      .filter((o) => (o.status === 'processing' || o.status === 'shipped') && o.expectedDeliveryAt < data.asOf)
      .sort((a, b) => a.expectedDeliveryAt.localeCompare(b.expectedDeliveryAt) || a.id.localeCompare(b.id))
      .map((o) => o.id)
    expect(late.length).toBeGreaterThan(3)
    const h = shopHarness()
    const run = await h.program('delayed-orders')
    expect(run.value.result).toEqual({ marked: late, failed: [] })
    expect(
      h.shop.orders
        .filter((o) => o.status === 'delayed')
        .map((o) => o.id)
        .sort(),
    ).toEqual([...late].sort())
    expectCompleteLog(run.events, 'run1', 2 + late.length)
    // An exclusive write starts only after the previous call settled.
    const order = run.events
      .filter((e) => e.type.startsWith('tool/ptc-dispatch'))
      .map((e) => `${e.type === 'tool/ptc-dispatch' ? 'end' : 'start'} ${String(e.name)}`)
    const writes = order.slice(order.indexOf('start update_order_status'))
    expect(writes).toEqual(late.flatMap(() => ['start update_order_status', 'end update_order_status']))
  })

  test('refund a damaged item: the refund goes through approval and refunds one unit of the monitor', async () => {
    const gareth = data.customers.find((c) => c.name === 'Gareth Evans')
    const screens = new Set(
      data.products.filter((p) => p.category === 'monitors' && p.name.includes('-inch')).map((p) => p.sku),
    )
    const order = newestFirst(data.orders.filter((o) => o.customerId === gareth?.id && o.status === 'delivered')).find(
      (o) => o.items.some((i) => screens.has(i.sku)),
    )
    const line = order?.items.find((i) => screens.has(i.sku))
    expect(order).toBeDefined()

    const h = shopHarness()
    const run = await h.program('refund-damaged')
    expect(run.value.result).toEqual({
      refundId: 'R-0001',
      orderId: order?.id,
      amountCents: line?.unitPriceCents,
      refundedCents: line?.unitPriceCents,
      remainingCents: (order?.totalCents ?? 0) - (line?.unitPriceCents ?? 0),
    })
    expect(h.shop.refunds).toEqual([
      {
        id: 'R-0001',
        orderId: order?.id,
        amountCents: line?.unitPriceCents,
        reason: `${productName(line?.sku ?? '')} arrived damaged (cracked screen)`,
      },
    ])
    // Only the refund asked the user, as a sub-call of this run.
    expect(h.approvals).toHaveLength(1)
    expect(h.approvals[0]?.exec).toMatchObject({
      name: 'issue_refund',
      rootCallId: 'run1',
      arguments: { orderId: order?.id, amountCents: line?.unitPriceCents },
    })
    expect(h.approvals[0]?.exec.callId).toMatch(/^run1:ptc:\d+$/)
    expect(h.approvals[0]?.reason).toContain(order?.id)
    const subCalls = subCallsOf(run.events, 'run1')
    expectCompleteLog(run.events, 'run1', subCalls.length)
    expect(subCalls.at(-1)).toMatchObject({
      name: 'issue_refund',
      isError: false,
      subCallId: h.approvals[0]?.exec.callId,
    })
  })

  test('a refund above the order total is denied by the guard, even though the user approved it', async () => {
    const order = data.orders.find((o) => o.status === 'delivered')
    const h = shopHarness()
    const run = await h.run(`
      try {
        return await tools.issue_refund({ orderId: ${JSON.stringify(order?.id)}, amountCents: ${(order?.totalCents ?? 0) + 1}, reason: 'goodwill' })
      } catch (error) {
        return { denied: error instanceof ToolCallError, message: (error as Error).message }
      }`)
    expect(run.value.result).toEqual({ denied: true, message: expect.stringMatching(/exceeds the total of order/) })
    expect(h.shop.refunds).toEqual([])
    // The policy's ask runs before the guards, so the user was asked first; the guard still wins.
    expect(h.approvals.map((a) => a.exec.name)).toEqual(['issue_refund'])
    expect(subCallsOf(run.events, 'run1')).toMatchObject([{ name: 'issue_refund', isError: true, code: 'DENIED' }])
  })

  test('a refund the user rejects is not issued and the program sees why', async () => {
    const h = shopHarness({ answer: 'rejected' })
    const run = await h.program('refund-damaged')
    expect(run.result.isError).toBe(true)
    expect(run.result.isError && run.result.error.info?.code).toBe('CODE_RUN_FAILED')
    expect(h.shop.refunds).toEqual([])
    expect(h.approvals).toHaveLength(1)
    expect(subCallsOf(run.events, 'run1').at(-1)).toMatchObject({ name: 'issue_refund', isError: true, code: 'DENIED' })
  })

  test('an unknown id fails that call only, with a message that says what to do', async () => {
    const h = shopHarness()
    const run = await h.run(`
      const [missing, found] = await Promise.allSettled([tools.get_customer({ id: 'C999' }), tools.get_customer({ id: 'C001' })])
      return { missing: missing.status === 'rejected' ? String(missing.reason.message) : 'resolved', found: found.status === 'fulfilled' ? found.value.name : 'rejected' }`)
    expect(run.value.result).toEqual({
      missing: expect.stringMatching(/customer "C999" was not found \(ids look like "C001"; use search_customers/),
      found: data.customers[0]?.name,
    })
    expect(subCallsOf(run.events, 'run1')).toMatchObject([{ isError: true, code: 'TOOL_ERROR' }, { isError: false }])
  })

  test('a misspelled argument is INVALID_ARGS rather than a silently ignored filter', async () => {
    const h = shopHarness()
    const run = await h.run(`return await tools.list_orders({ customer_id: 'C007' }).catch((e: Error) => e.message)`)
    expect(run.value.result).toMatch(
      /\/customer_id: is not a list_orders argument \(known: customerId, status, since, limit\)/,
    )
    expect(subCallsOf(run.events, 'run1')).toMatchObject([{ isError: true, code: 'INVALID_ARGS' }])
  })

  test('runs do not share state: each harness starts from data.json', async () => {
    const first = shopHarness()
    await first.program('delayed-orders')
    const second = shopHarness()
    const run = await second.program('delayed-orders')
    expect((run.value.result as { marked: string[] }).marked.length).toBeGreaterThan(0)
    expect(createShop().orders.filter((o) => o.status === 'delayed')).toEqual([])
  })
})

describe('the programs are valid against what the model reads', () => {
  /** The TypeScript block of the SDK prompt section. */
  const sdk = /```ts\n([\s\S]*?)```/.exec(sdkText(shopTools()))?.[1] ?? ''

  const MISUSE = `const c = await tools.get_customer({ id: 1 }); return c.nickname`

  /** Type errors per program, from one compilation of the SDK plus every program (each wrapped in an async function). */
  let cached: Map<string, string[]> | undefined
  function typeErrors(name: string): string[] {
    if (cached === undefined) {
      const bodies = new Map<string, string>([
        ...SHOP_PROGRAMS.map((p): [string, string] => [p, loadProgram(p).code]),
        ['misuse', MISUSE],
      ])
      const files = new Map<string, string>([['/sdk.ts', sdk]])
      for (const [key, body] of bodies)
        files.set(`/${key}.ts`, `export {}\nasync function program() {\n${body}\n}\nvoid program\n`)
      const options: ts.CompilerOptions = {
        strict: true,
        noEmit: true,
        target: ts.ScriptTarget.ES2022,
        lib: ['lib.es2023.d.ts'],
        types: [],
      }
      const host = ts.createCompilerHost(options)
      const read = host.getSourceFile.bind(host)
      host.getSourceFile = (file, version) =>
        files.has(file) ? ts.createSourceFile(file, files.get(file) ?? '', version) : read(file, version)
      host.fileExists = (file) => files.has(file) || ts.sys.fileExists(file)
      const program = ts.createProgram([...files.keys()], options, host)
      cached = new Map()
      for (const d of ts.getPreEmitDiagnostics(program)) {
        const key = d.file?.fileName.slice(1, -3) ?? 'global'
        cached.set(key, [...(cached.get(key) ?? []), ts.flattenDiagnosticMessageText(d.messageText, '\n')])
      }
    }
    return [...(cached.get(name) ?? []), ...(cached.get('sdk') ?? []), ...(cached.get('global') ?? [])]
  }

  test('the SDK declares every shop tool', () => {
    expect(sdk).toContain('declare const tools: Tools')
    for (const tool of shopTools()) expect(sdk).toContain(`${tool.name}(args`)
  })

  test.each(SHOP_PROGRAMS.map((name) => [name]))('%s type-checks against the SDK declarations', (name) => {
    expect(typeErrors(name)).toEqual([])
  })

  test('the check catches a program that misuses a tool', () => {
    const errors = typeErrors('misuse').join('\n')
    expect(errors).toMatch(/'number' is not assignable to type 'string'/)
    expect(errors).toMatch(/Property 'nickname' does not exist/)
  })
})
