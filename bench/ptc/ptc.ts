/**
 * Sub-calls per second through the whole PTC path (program -> sandbox ->
 * scheduler -> pipeline -> tool -> back) for a trivial tool, sequential and
 * under Promise.all, next to the bare sandbox bridge (the same program, the
 * runtime's `call` answering directly) and plain Node async calls, all in this
 * process. Then the fan-out figure: 200 calls of a 20 ms tool with cap 10, and runs per second with 64
 * `run_code` calls at once (each a program of one sub-call) on a runtime with its default sizes.
 * `maxPendingSubCalls` is raised so that one Promise.all can hold every call.
 *
 *   node --no-node-snapshot --conditions=@ptc/source --import tsx bench/ptc/ptc.ts [--quick] [--json] [--backend quickjs|isolated-vm]…
 *
 * `--json`: also print the `PTC_BENCH_JSON` line (see ../json.ts); `--backend` (repeatable): only these backends.
 */
import { createPtcExecutor } from '@ptc/ptc'
import type { CodeRuntime, JsonValue } from '@ptc/sandbox'
import { createIsolatedVmRuntime, isolatedVmAvailability } from '@ptc/sandbox-isolated-vm'
import { createQuickJSRuntime } from '@ptc/sandbox-quickjs'
import { defineTool, ToolsService } from '@ptc/tools'
import { argValues, emitBenchJson, quickRequested, type BenchResult } from '../json.js'
import { formatRate, machine, median } from '../util.js'

const quick = quickRequested
const backendFilter = argValues('backend')
const CALLS = quick ? 1_000 : 5_000
const ROUNDS = quick ? 3 : 5
const signal = new AbortController().signal

const CONCURRENT_RUNS = 64
const RUNS = quick ? 320 : 1_000
const oneCall = 'return (await tools.inc({ n: 1 })).n'

const sequential = `let s = 0\nfor (let i = 0; i < ${CALLS}; i++) s += (await tools.inc({ n: i })).n\nreturn s`
const parallel = `const all = await Promise.all(Array.from({ length: ${CALLS} }, (_, i) => tools.inc({ n: i })))\nreturn all.length`

const inc = defineTool({
  name: 'inc',
  description: 'n + 1',
  parameters: { n: { type: 'integer', required: true } },
  output: {
    schema: { type: 'object', additionalProperties: false, properties: { n: { type: 'integer' } } },
    render: (_a, v) => [{ type: 'text', text: String(v.n) }],
  },
  isConcurrencySafe: () => true,
  execute: async ({ n }) => ({ n: n + 1 }),
})

const wait = defineTool({
  name: 'wait',
  description: 'waits 20 ms',
  parameters: { i: { type: 'integer', required: true } },
  output: { schema: { type: 'integer' }, render: (_a, v) => [{ type: 'text', text: String(v) }] },
  isConcurrencySafe: () => true,
  execute: async ({ i }, ctx) => {
    await new Promise<void>((resolve, reject) => {
      const onAbort = (): void => (clearTimeout(t), reject(ctx.signal.reason))
      const t = setTimeout(() => (ctx.signal.removeEventListener('abort', onAbort), resolve()), 20)
      ctx.signal.addEventListener('abort', onAbort, { once: true })
    })
    return i
  },
})

/** Median calls per second of `round` (which makes CALLS calls). */
async function rate(round: () => Promise<unknown>): Promise<number> {
  await round()
  const rates: number[] = []
  for (let i = 0; i < ROUNDS; i++) {
    const start = performance.now()
    await round()
    rates.push(CALLS / ((performance.now() - start) / 1000))
  }
  return median(rates)
}

function wholePath(runtime: CodeRuntime, maxParallelSubCalls = 10): (code: string) => Promise<void> {
  const tools = new ToolsService()
  tools.register(inc)
  tools.register(wait)
  tools.setExecutor(createPtcExecutor({ runtime, maxParallelSubCalls, limits: { maxPendingSubCalls: 10_000 } }))
  let n = 0
  return async (code) => {
    const out = await tools.execute({
      calls: [
        {
          type: 'tool_call',
          id: `r${n++}`,
          name: 'run_code',
          arguments: JSON.stringify({ code, description: 'bench' }),
        },
      ],
      signal,
    })
    const result = out.results[0]?.result
    if (result === undefined || result.isError)
      throw new Error(`bench program failed: ${JSON.stringify(result?.content)}`)
  }
}

function bareBridge(runtime: CodeRuntime): (code: string) => Promise<void> {
  const call = async (_name: string, args: JsonValue): Promise<JsonValue> => ({ n: (args as { n: number }).n + 1 })
  return async (code) => {
    const result = await runtime.run({ code, bindings: ['inc'], call, limits: { maxPendingSubCalls: 10_000 } })
    if (result.error !== undefined) throw new Error(`bench program failed: ${result.error.message}`)
  }
}

/**
 * Runs per second through the whole path with CONCURRENT_RUNS `run_code` calls in flight (each a program of
 * one sub-call), on a fresh runtime with its default sizes (pool, processes, warm isolates); the median of
 * ROUNDS rounds of RUNS runs after one warm-up round.
 */
async function concurrentRuns(runtime: CodeRuntime): Promise<number> {
  try {
    const run = wholePath(runtime)
    const round = async (runs: number): Promise<number> => {
      let left = runs
      const start = performance.now()
      await Promise.all(
        Array.from({ length: CONCURRENT_RUNS }, async () => {
          while (left-- > 0) await run(oneCall)
        }),
      )
      return runs / ((performance.now() - start) / 1000)
    }
    await round(CONCURRENT_RUNS * 2)
    const rates: number[] = []
    for (let i = 0; i < ROUNDS; i++) rates.push(await round(RUNS))
    return median(rates)
  } finally {
    await runtime.dispose()
  }
}

async function plainNode(): Promise<[number, number]> {
  const incBody = async (n: number): Promise<{ n: number }> => ({ n: n + 1 })
  const seq = await rate(async () => {
    let s = 0
    for (let i = 0; i < CALLS; i++) s += (await incBody(i)).n
    return s
  })
  const par = await rate(() => Promise.all(Array.from({ length: CALLS }, (_, i) => incBody(i))))
  return [seq, par]
}

async function main(): Promise<void> {
  const [nodeSeq, nodePar] = await plainNode()
  const title = `ptc whole-path benchmark — ${machine()} — ${CALLS} calls per program, median of ${ROUNDS}`
  const results: BenchResult[] = []
  console.log(title)
  console.log(`plain Node async call: sequential ${formatRate(nodeSeq)}, Promise.all ${formatRate(nodePar)}\n`)
  console.log(
    `| backend | bridge seq | whole path seq | ratio | bridge Promise.all | whole path Promise.all | ratio | fan-out 200 x 20 ms, cap 10 (ideal 400 ms) | runs/s, ${CONCURRENT_RUNS} run_code at once |`,
  )
  console.log('|---|---|---|---|---|---|---|---|---|')
  // The sub-call figures use one worker; runs per second, the runtime's default sizes.
  const backends: [string, () => CodeRuntime, () => CodeRuntime][] = [
    ['quickjs (worker)', () => createQuickJSRuntime({ poolSize: 1 }), () => createQuickJSRuntime()],
    [
      'quickjs (inline)',
      () => createQuickJSRuntime({ isolation: 'inline' }),
      () => createQuickJSRuntime({ isolation: 'inline' }),
    ],
  ]
  if (isolatedVmAvailability().available)
    backends.push(['isolated-vm', () => createIsolatedVmRuntime(), () => createIsolatedVmRuntime()])
  const selected = backends.filter(
    ([label]) => backendFilter.length === 0 || backendFilter.some((b) => label.startsWith(b)),
  )
  for (const [label, create, createDefault] of selected) {
    const runtime = create()
    try {
      const bridge = bareBridge(runtime)
      const whole = wholePath(runtime)
      const bSeq = await rate(() => bridge(sequential))
      const wSeq = await rate(() => whole(sequential))
      const bPar = await rate(() => bridge(parallel))
      const wPar = await rate(() => whole(parallel))
      const fan: number[] = []
      const fanOut = wholePath(runtime, 10)
      for (let i = 0; i < ROUNDS; i++) {
        const start = performance.now()
        await fanOut('await Promise.all(Array.from({ length: 200 }, (_, i) => tools.wait({ i })))')
        fan.push(performance.now() - start)
      }
      const fanMs = median(fan)
      const runsPerSecond = await concurrentRuns(createDefault())
      console.log(
        `| ${label} | ${formatRate(bSeq)} | ${formatRate(wSeq)} | ${((wSeq / bSeq) * 100).toFixed(0)}% | ${formatRate(bPar)} | ${formatRate(wPar)} | ${((wPar / bPar) * 100).toFixed(0)}% | ${fanMs.toFixed(0)} ms (+${((fanMs / 400 - 1) * 100).toFixed(1)}%) | ${runsPerSecond.toFixed(0)} |`,
      )
      const perSecond = { unit: 'calls/s', better: 'higher' } as const
      results.push(
        {
          group: label,
          case: 'bridge, sequential',
          median: bSeq,
          ...perSecond,
          baseline: { case: 'plain Node async call', median: nodeSeq },
        },
        {
          group: label,
          case: 'whole path, sequential',
          median: wSeq,
          ...perSecond,
          baseline: { case: 'bare sandbox bridge', median: bSeq },
        },
        {
          group: label,
          case: 'bridge, Promise.all',
          median: bPar,
          ...perSecond,
          baseline: { case: 'plain Node Promise.all', median: nodePar },
        },
        {
          group: label,
          case: 'whole path, Promise.all',
          median: wPar,
          ...perSecond,
          baseline: { case: 'bare sandbox bridge', median: bPar },
        },
        {
          group: label,
          case: 'fan-out 200 x 20 ms, cap 10',
          median: fanMs,
          unit: 'ms',
          better: 'lower',
          baseline: { case: 'ideal schedule', median: 400 },
        },
        {
          group: label,
          case: `${CONCURRENT_RUNS} run_code calls at once (1 sub-call each)`,
          median: runsPerSecond,
          unit: 'runs/s',
          better: 'higher',
        },
      )
    } finally {
      await runtime.dispose()
    }
  }
  emitBenchJson('ptc', title, results)
}

await main()
