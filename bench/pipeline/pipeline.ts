/**
 * Calls per second through `ToolsService.execute` for a trivial tool, one call
 * per batch and 100 calls per batch, without listeners and with one listener
 * on each waterfall, against calling the tool body directly in this process.
 * Then what a model request's input costs the host each turn (`modelInput()` with the PTC
 * executor: its SDK declarations of 200 tools), against rendering them every time (`sdkText`).
 *
 *   node --conditions=@ptc/source --import tsx bench/pipeline/pipeline.ts [--quick] [--json]
 *
 * `--quick`: fewer calls and rounds (for `ptc bench --quick`); `--json`: also print the
 * `PTC_BENCH_JSON` line (see ../json.ts).
 */
import { createPtcExecutor, sdkText } from '@ptc/ptc'
import { DEFAULT_LIMITS, type CodeRuntime } from '@ptc/sandbox'
import { ToolsService, type ToolCallBlock, type ToolDefinition, type ToolRunContext } from '@ptc/tools'
import { emitBenchJson, quickRequested, type BenchResult } from '../json.js'
import { formatRate, machine, median, medianRate } from '../util.js'

const trivial: ToolDefinition = {
  name: 'echo',
  description: 'Returns its number, doubled.',
  parameters: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'], additionalProperties: false },
  output: {
    schema: {
      type: 'object',
      properties: { doubled: { type: 'integer' } },
      required: ['doubled'],
      additionalProperties: false,
    },
    render: (_args, value) => [{ type: 'text', text: JSON.stringify(value) }],
  },
  execute: async (args) => ({ doubled: (args as { n: number }).n * 2 }),
  isConcurrencySafe: () => true,
}

const CALLS = quickRequested ? 5_000 : 20_000
const ROUNDS = quickRequested ? 5 : 7
const signal = new AbortController().signal
const call = (i: number): ToolCallBlock => ({
  type: 'tool_call',
  id: `c${i}`,
  name: 'echo',
  arguments: `{"n":${i % 1000}}`,
})
const singles = Array.from({ length: CALLS }, (_, i) => [call(i)])
const hundreds = Array.from({ length: CALLS / 100 }, (_, b) => Array.from({ length: 100 }, (_, i) => call(b * 100 + i)))

function service(listeners: boolean): ToolsService {
  const tools = new ToolsService()
  tools.register(trivial)
  if (listeners) {
    tools.on('tools/pre-execute', (_exec, next) => next())
    tools.on('tools/execute', (_exec, next) => next())
    tools.on('tools/post-execute', (_exec, _result, next) => next())
  }
  return tools
}

async function main(): Promise<void> {
  const context = { signal } as unknown as ToolRunContext
  const direct = await medianRate(
    CALLS,
    async () => {
      for (let i = 0; i < CALLS; i++) await trivial.execute({ n: i % 1000 }, context)
    },
    ROUNDS,
  )
  const rows: [string, number][] = [['direct body call (baseline)', direct]]
  for (const listeners of [false, true]) {
    const tools = service(listeners)
    const label = listeners ? 'one listener per waterfall' : 'no listeners'
    rows.push([
      `execute(), 1 call/batch, ${label}`,
      await medianRate(
        CALLS,
        async () => {
          for (const calls of singles) await tools.execute({ calls, signal })
        },
        ROUNDS,
      ),
    ])
    rows.push([
      `execute(), 100 calls/batch, ${label}`,
      await medianRate(
        CALLS,
        async () => {
          for (const calls of hundreds) await tools.execute({ calls, signal })
        },
        ROUNDS,
      ),
    ])
  }
  const title = `pipeline benchmark — ${machine()} — median of ${ROUNDS} rounds of ${CALLS} calls`
  console.log(title)
  console.log('| case | calls/s | µs/call | overhead vs direct (µs) |')
  console.log('|---|---|---|---|')
  for (const [label, rate] of rows) {
    const us = 1e6 / rate
    console.log(`| ${label} | ${formatRate(rate)} | ${us.toFixed(2)} | ${(us - 1e6 / direct).toFixed(2)} |`)
  }
  const baseline = { case: 'direct body call', median: direct }
  const results = rows
    .slice(1)
    .map(([label, rate]): BenchResult => ({ case: label, median: rate, unit: 'calls/s', better: 'higher', baseline }))
  results.push(...modelInputCost())
  emitBenchJson('pipeline', title, results)
}

/** A runtime that is never asked to run: the model input does not need one. */
const idleRuntime: CodeRuntime = {
  name: 'idle',
  limits: DEFAULT_LIMITS,
  run: () => Promise.reject(new Error('not for running')),
  dispose: async () => undefined,
  [Symbol.asyncDispose]: async () => undefined,
}

/** `modelInput()` each turn with 200 tools of 40 fields: the first, the next ones, and a render every time. */
function modelInputCost(): BenchResult[] {
  const TOOLS = 200
  const TURNS = quickRequested ? 20 : 50
  const fields = Object.fromEntries(
    Array.from({ length: 40 }, (_, i) => [
      `field${i}`,
      { type: 'string' as const, description: `field number ${i} of the record` },
    ]),
  )
  const tools = new ToolsService()
  for (let t = 0; t < TOOLS; t++) {
    tools.register({
      ...trivial,
      name: `tool_${t}`,
      description: `Tool ${t}: reads and writes records.`,
      parameters: { type: 'object', properties: fields, additionalProperties: false },
    })
  }
  tools.setExecutor(createPtcExecutor({ runtime: idleRuntime }))
  const time = (fn: () => unknown): number => {
    const start = performance.now()
    fn()
    return performance.now() - start
  }
  const first = time(() => tools.modelInput())
  const next = median(Array.from({ length: TURNS }, () => time(() => tools.modelInput())))
  const each = median(Array.from({ length: TURNS }, () => time(() => sdkText(tools.definitions()))))
  const chars = sdkText(tools.definitions()).length
  console.log(
    `\nmodelInput() with the PTC executor, ${TOOLS} tools of 40 fields (SDK text ${chars} characters), median of ${TURNS} turns`,
  )
  console.log('| case | ms |')
  console.log('|---|---|')
  console.log(`| first request | ${first.toFixed(2)} |`)
  console.log(`| next requests, the same tools | ${next.toFixed(3)} |`)
  console.log(`| rendering the SDK text every time (sdkText) | ${each.toFixed(2)} |`)
  const renderBaseline = { case: 'rendering the SDK text every time', median: each }
  return [
    {
      case: `modelInput(), ${TOOLS} tools, first request`,
      median: first,
      unit: 'ms',
      better: 'lower',
      baseline: renderBaseline,
    },
    {
      case: `modelInput(), ${TOOLS} tools, next requests`,
      median: next,
      unit: 'ms',
      better: 'lower',
      baseline: renderBaseline,
    },
  ]
}

await main()
