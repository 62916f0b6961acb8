/**
 * Programmatic tool calling end to end: the model sends one `run_code` call,
 * its program calls the shop's tools inside QuickJS, and every call goes
 * through the full pipeline (policy, approval, guards, the session log).
 * Prints what the model reads, the sub-calls from the durable log, and how
 * many bytes of tool results never reached the model.
 *
 *   node --conditions=@ptc/source --import tsx examples/ptc-shop.ts [top-customers|low-stock|delayed-orders|refund-damaged]
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  byteFigures,
  contentText,
  createShop,
  installShopPolicy,
  nativeComparison,
  shopTools,
  subCallsOf,
} from '@ptc/cli'
import { createPtcExecutor } from '@ptc/ptc'
import { createQuickJSRuntime } from '@ptc/sandbox-quickjs'
import { ToolsService, type Agent, type ToolCallBlock } from '@ptc/tools'
import { JsonlSession, readJsonlSession } from '@ptc/tools/session'
import { loadProgram, SHOP_PROGRAMS, type ShopProgramName } from './shop/programs.js'

const requested = process.argv[2] ?? 'top-customers'
if (!(SHOP_PROGRAMS as readonly string[]).includes(requested)) {
  console.error(`unknown program ${JSON.stringify(requested)}; one of: ${SHOP_PROGRAMS.join(', ')}`)
  process.exit(2)
}
const program = loadProgram(requested as ShopProgramName)

// The host: shop tools, the shop's policy, an approval service (a real harness asks the user).
const shop = createShop()
const tools = new ToolsService({
  approval: {
    request: async ({ exec, reason }) => {
      console.log(`[approval] ${exec.name} (${exec.callId}): ${reason ?? 'no reason given'} -> allowed once`)
      return 'allowed-once'
    },
  },
})
const shopToolList = shopTools({ shop })
for (const tool of shopToolList) tools.register(tool)
installShopPolicy(tools, { shop })

// Code mode: the model sees only run_code; the shop tools are reachable from programs.
await using runtime = createQuickJSRuntime()
tools.setExecutor(createPtcExecutor({ runtime, mode: 'code' }))
// Start the worker pool first, so the timings below are the tools' and not the sandbox's start-up.
await runtime.run({ code: 'return 1', bindings: [], call: async () => null })

const dir = await mkdtemp(join(tmpdir(), 'ptc-shop-'))
try {
  const session = await JsonlSession.open(join(dir, 'session.jsonl'))
  const agent: Agent = { id: 'shop-agent', session }
  const modelInput = tools.modelInput(agent)
  const sdkBytes = modelInput.sections.reduce((sum, s) => sum + Buffer.byteLength(s.text, 'utf8'), 0)
  console.log(
    `Model tools: ${modelInput.schemas.map((s) => s.name).join(', ')} (+ ${sdkBytes} bytes of SDK declarations for ${shopToolList.length} shop tools)`,
  )
  console.log(`\nProgram "${program.name}": ${program.description}\n${indent(program.code, '  | ')}\n`)

  const call: ToolCallBlock = {
    type: 'tool_call',
    id: 'call_1',
    name: 'run_code',
    arguments: JSON.stringify({ code: program.code, description: program.description }),
  }
  const t0 = performance.now()
  const batch = await tools.execute({
    calls: [call],
    signal: new AbortController().signal,
    agent,
    log: { turn: 1, step: 1 },
  })
  const wallMs = performance.now() - t0
  await session.close()

  const result = batch.results[0]?.result
  if (result === undefined) throw new Error('run_code returned no result')
  console.log(
    `What the model reads (${result.isError ? `error ${result.error.info?.code ?? ''}` : 'ok'}):\n${indent(contentText(result.content), '  ')}\n`,
  )

  const { events } = await readJsonlSession(session.path)
  const subCalls = subCallsOf(events, call.id)
  console.log(`Sub-calls from the session log (${events.length} events in ${session.path}):`)
  for (const c of subCalls) {
    const outcome =
      c.settledAt === undefined ? 'never settled' : c.isError ? `error ${c.code ?? ''}: ${c.errorMessage ?? ''}` : 'ok'
    const ms = c.settledAt === undefined ? '' : `${c.settledAt - c.startedAt} ms`
    console.log(
      `  ${c.subCallId.padEnd(14)} ${c.name.padEnd(20)} ${ms.padStart(6)} ${String(c.contentBytes).padStart(6)} B  ${outcome}  ${JSON.stringify(c.arguments)}`,
    )
  }
  const busyMs = subCalls.reduce((sum, c) => sum + (c.settledAt ?? c.startedAt) - c.startedAt, 0)
  const spanMs =
    subCalls.length === 0
      ? 0
      : Math.max(...subCalls.map((c) => c.settledAt ?? c.startedAt)) - Math.min(...subCalls.map((c) => c.startedAt))
  console.log(
    `  sub-call durations add up to ${busyMs} ms within a ${spanMs} ms span (safe calls overlap, writes run alone);`,
  )
  console.log(`  run_code took ${Math.round(wallMs)} ms in all`)

  const bytes = byteFigures(subCalls, result.content)
  console.log(`\nTool result bytes that stayed in the sandbox: ${bytes.inSandbox}`)
  console.log(
    `Bytes that reached the model:                ${bytes.toModel}${bytes.inSandbox > 0 ? ` (${Math.round((100 * bytes.toModel) / bytes.inSandbox)}% of what the tools returned)` : ''}`,
  )
  const comparison = nativeComparison(subCalls.length, bytes)
  if (comparison !== undefined) console.log(`${comparison[0]?.toUpperCase() ?? ''}${comparison.slice(1)}.`)
  if (shop.refunds.length > 0)
    console.log(`Refunds issued: ${shop.refunds.map((r) => `${r.id} ${r.orderId} ${r.amountCents}c`).join(', ')}`)
} finally {
  await rm(dir, { recursive: true, force: true })
}

function indent(text: string, prefix: string): string {
  return text
    .split('\n')
    .map((line) => prefix + line)
    .join('\n')
}
