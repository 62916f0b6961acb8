/**
 * Calls per second through `ToolsService.execute` for a trivial tool, one call
 * per batch and 100 calls per batch, without listeners and with one listener
 * on each waterfall, against calling the tool body directly in this process.
 *
 *   node --conditions=@ptc/source --import tsx bench/pipeline/pipeline.ts [--quick] [--json]
 *
 * `--quick`: fewer calls and rounds (for `ptc bench --quick`); `--json`: also print the
 * `PTC_BENCH_JSON` line (see ../json.ts).
 */
import { ToolsService, type ToolCallBlock, type ToolDefinition, type ToolRunContext } from '@ptc/tools'
import { emitBenchJson, quickRequested, type BenchResult } from '../json.js'
import { formatRate, machine, medianRate } from '../util.js'

const trivial: ToolDefinition = {
  name: 'echo',
  description: 'Returns its number, doubled.',
  parameters: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'], additionalProperties: false },
  output: {
    schema: { type: 'object', properties: { doubled: { type: 'integer' } }, required: ['doubled'], additionalProperties: false },
    render: (_args, value) => [{ type: 'text', text: JSON.stringify(value) }],
  },
  execute: async (args) => ({ doubled: (args as { n: number }).n * 2 }),
  isConcurrencySafe: () => true,
}

const CALLS = quickRequested ? 5_000 : 20_000
const ROUNDS = quickRequested ? 5 : 7
const signal = new AbortController().signal
const call = (i: number): ToolCallBlock => ({ type: 'tool_call', id: `c${i}`, name: 'echo', arguments: `{"n":${i % 1000}}` })
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
  const direct = await medianRate(CALLS, async () => {
    for (let i = 0; i < CALLS; i++) await trivial.execute({ n: i % 1000 }, context)
  }, ROUNDS)
  const rows: [string, number][] = [['direct body call (baseline)', direct]]
  for (const listeners of [false, true]) {
    const tools = service(listeners)
    const label = listeners ? 'one listener per waterfall' : 'no listeners'
    rows.push([
      `execute(), 1 call/batch, ${label}`,
      await medianRate(CALLS, async () => {
        for (const calls of singles) await tools.execute({ calls, signal })
      }, ROUNDS),
    ])
    rows.push([
      `execute(), 100 calls/batch, ${label}`,
      await medianRate(CALLS, async () => {
        for (const calls of hundreds) await tools.execute({ calls, signal })
      }, ROUNDS),
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
  const results = rows.slice(1).map(([label, rate]): BenchResult => ({ case: label, median: rate, unit: 'calls/s', better: 'higher', baseline }))
  emitBenchJson('pipeline', title, results)
}

await main()
