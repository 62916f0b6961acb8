/**
 * isolated-vm backend benchmark: each measurement next to the raw isolated-vm library with the same
 * call shape (ignored-result Callback into the host, a pending table in the guest, settled by the
 * host calling a guest function) and plain Node async calls, in the same process. Medians of REPS.
 *
 *   node --no-node-snapshot --conditions=@ptc/source --import tsx bench/sandbox/isolated-vm.ts
 *   CONTAINMENT=none node …   # isolates in this process instead of the default engine child processes
 */
import { createRequire } from 'node:module'
import type { CodeRuntime, JsonValue } from '@ptc/sandbox'
import { createIsolatedVmRuntime } from '@ptc/sandbox-isolated-vm'
// isolated-vm is a dependency of the backend package only: resolve it (and its types) from there.
import type IsolatedVM from '../../sandbox/isolated-vm/node_modules/isolated-vm'

import { emitBenchJson, quickRequested, type BenchResult } from '../json.js'
const ivm = createRequire(new URL('../../sandbox/isolated-vm/package.json', import.meta.url))(
  'isolated-vm',
) as typeof IsolatedVM
const REPS = Number(process.env['REPS'] ?? (quickRequested ? 3 : 7))
/** `--quick`: smaller loads, for `ptc bench --quick`. */
const SCALE = quickRequested ? 0.25 : 1
const echo = async (name: string, args: JsonValue): Promise<JsonValue> => ({ name, args })
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1] ?? NaN

async function medianOf(fn: () => Promise<number>): Promise<number> {
  const xs: number[] = []
  for (let i = 0; i < REPS; i++) xs.push(await fn())
  return median(xs)
}

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const t = performance.now()
  await fn()
  return performance.now() - t
}

// ---- raw isolated-vm, same call shape ----

const RAW_GUEST = `var pending = new Map(), next = 0, c = $0, done = $1;
globalThis.call = function (name, args) {
  return new Promise(function (res, rej) { var id = ++next; pending.set(id, [res, rej]); c(id, name, JSON.stringify(args)) })
};
globalThis.finish = function (v) { done(v === undefined ? '' : JSON.stringify(v)) };
return function settle(batch) {
  var q = JSON.parse(batch);
  for (var i = 0; i < q.length; i++) { var p = pending.get(q[i][0]); pending.delete(q[i][0]); p[0](q[i][1]) }
}`

/**
 * One raw isolate running `body` (an async function body using `call`), settling per setImmediate
 * batch with `applyIgnored` (the fastest form) or `apply` (a promise per batch, as the backend does).
 */
async function rawRun(
  body: string,
  host: (name: string, args: JsonValue) => Promise<JsonValue> = echo,
  settleWith: 'applyIgnored' | 'apply' = 'applyIgnored',
): Promise<string> {
  const isolate = new ivm.Isolate({ memoryLimit: 256 })
  try {
    const context = await isolate.createContext()
    let resolve!: (v: string) => void
    const finished = new Promise<string>((r) => (resolve = r))
    let replies: string[] = []
    const holder: { settle?: IsolatedVM.Reference<(batch: string) => void> } = {}
    const flush = () => {
      const batch = `[${replies.join(',')}]`
      replies = []
      if (settleWith === 'apply') void holder.settle?.apply(undefined, [batch]).catch(() => {})
      else holder.settle?.applyIgnored(undefined, [batch])
    }
    const call = new ivm.Callback(
      (id: number, name: string, argsJson: string) => {
        void host(name, JSON.parse(argsJson) as JsonValue).then((v) => {
          if (replies.push(`[${id},${JSON.stringify(v)}]`) === 1) setImmediate(flush)
        })
      },
      { ignored: true },
    )
    const done = new ivm.Callback((v: string) => resolve(v), { ignored: true })
    holder.settle = (await context.evalClosure(RAW_GUEST, [call, done], {
      result: { reference: true },
    })) as IsolatedVM.Reference<(batch: string) => void>
    const script = await isolate.compileScript(`(async function () {\n${body}\n})().then(finish)`)
    script.runIgnored(context)
    return await finished
  } finally {
    isolate.dispose()
  }
}

// ---- scenarios ----

interface Row {
  what: string
  ptc: string
  raw: string
  node: string
  note?: string
}
const rows: Row[] = []
/** The same medians as numbers, for `ptc bench` (`--json`). */
const results: BenchResult[] = []
const ms = (x: number) => `${x.toFixed(2)} ms`
const rate = (x: number, unit = 'calls/s') => `${Math.round(x).toLocaleString('en-US')} ${unit}`

async function trivial(rt: CodeRuntime, cold: CodeRuntime): Promise<void> {
  const run = (r: CodeRuntime) => r.run({ code: 'return 1', bindings: [], call: echo })
  for (let i = 0; i < 20; i++) await run(rt) // JIT warm-up
  const warm = await medianOf(async () => {
    const xs: number[] = []
    for (let i = 0; i < 20; i++) {
      await sleep(15) // let the pool refill between runs
      xs.push(await timed(() => run(rt)))
    }
    return median(xs)
  })
  const coldMs = await medianOf(async () => {
    const xs: number[] = []
    for (let i = 0; i < 20; i++) xs.push(await timed(() => run(cold)))
    return median(xs)
  })
  const rawMs = await medianOf(async () => {
    const xs: number[] = []
    for (let i = 0; i < 20; i++) xs.push(await timed(() => rawRun('return 1')))
    return median(xs)
  })
  const nodeMs = await medianOf(async () => {
    const f = new Function('return (async function () { return 1 })()') as () => Promise<number>
    return timed(f)
  })
  rows.push({
    what: 'trivial run, warm pool',
    ptc: ms(warm),
    raw: ms(rawMs),
    node: ms(nodeMs),
    note: 'raw = new isolate each time',
  })
  results.push(
    {
      case: 'trivial run, warm pool',
      median: warm,
      unit: 'ms',
      better: 'lower',
      baseline: { case: 'raw isolated-vm, new isolate', median: rawMs },
    },
    {
      case: 'trivial run, cold (no pool)',
      median: coldMs,
      unit: 'ms',
      better: 'lower',
      baseline: { case: 'raw isolated-vm, new isolate', median: rawMs },
    },
  )
  rows.push({ what: 'trivial run, cold (no pool)', ptc: ms(coldMs), raw: ms(rawMs), node: ms(nodeMs) })
  const backToBack = await medianOf(
    async () =>
      200 /
      ((await timed(async () => {
        for (let i = 0; i < 200; i++) await run(rt)
      })) /
        1000),
  )
  rows.push({
    what: 'trivial runs back to back',
    ptc: rate(backToBack, 'runs/s'),
    raw: rate(1000 / rawMs, 'runs/s'),
    node: '',
  })
}

async function subCalls(rt: CodeRuntime, parallel: boolean): Promise<void> {
  const N = Math.round((parallel ? 5000 : 2000) * SCALE)
  const body = parallel
    ? `await Promise.all(Array.from({ length: ${N} }, (_, i) => CALL('echo', { i })))`
    : `let s = 0\nfor (let i = 0; i < ${N}; i++) s += (await CALL('echo', { i })).args.i\nreturn s`
  const limits = { maxPendingSubCalls: 10_000, maxSubCalls: 10_000 }
  const code = body.replaceAll("CALL('echo', ", 'tools.echo(')
  const rawBody = body.replaceAll('CALL', 'call')
  const call = (name: string, args: JsonValue) =>
    echo(name, JSON.parse(JSON.stringify(args)) as JsonValue).then((v) => JSON.parse(JSON.stringify(v)) as JsonValue)
  const nodeFn = new Function('CALL', `return (async function () {\n${body}\n})()`) as (
    c: typeof call,
  ) => Promise<unknown>
  // Interleaved per repetition: this machine's load drifts more than the differences measured.
  const xs = { ptc: [] as number[], raw: [] as number[], rawApply: [] as number[], node: [] as number[] }
  for (let i = 0; i < REPS; i++) {
    xs.ptc.push(
      N /
        ((await timed(async () => {
          const r = await rt.run({ code, bindings: ['echo'], call: echo, limits })
          if (r.error) throw new Error(r.error.message)
        })) /
          1000),
    )
    xs.raw.push(N / ((await timed(() => rawRun(rawBody))) / 1000))
    xs.rawApply.push(N / ((await timed(() => rawRun(rawBody, echo, 'apply'))) / 1000))
    xs.node.push(N / ((await timed(() => nodeFn(call))) / 1000))
  }
  const [ptc, raw, rawApply, node] = [median(xs.ptc), median(xs.raw), median(xs.rawApply), median(xs.node)]
  results.push({
    case: parallel ? 'Promise.all sub-calls' : 'sequential sub-calls',
    median: ptc,
    unit: 'calls/s',
    better: 'higher',
    baseline: { case: 'raw isolated-vm, same call shape', median: raw },
  })
  rows.push({
    what: parallel ? `Promise.all sub-calls (${N})` : `sequential sub-calls (${N})`,
    ptc: rate(ptc),
    raw: rate(raw),
    node: rate(node),
    note: `ptc/raw ${((ptc / raw) * 100).toFixed(0)}%; raw settling with apply: ${rate(rawApply)} (ptc ${((ptc / rawApply) * 100).toFixed(0)}%)`,
  })
}

async function payload(rt: CodeRuntime): Promise<void> {
  const big = 'x'.repeat(1024 * 1024)
  const host = async () => big
  const body = 'const s = await CALL("big", {})\nreturn s'
  const ptc = await medianOf(() =>
    timed(async () => {
      const r = await rt.run({
        code: body.replace('CALL("big", {})', 'tools.big()'),
        bindings: ['big'],
        call: host,
        limits: { maxOutputBytes: 4 << 20 },
      })
      if (typeof r.value !== 'string' || r.value.length !== big.length) throw new Error(r.error?.message ?? 'bad value')
    }),
  )
  const raw = await medianOf(() => timed(() => rawRun(body.replace('CALL', 'call'), host)))
  const node = await medianOf(() =>
    timed(async () => JSON.parse(JSON.stringify(JSON.parse(JSON.stringify(await host()))))),
  )
  rows.push({ what: '1 MB string in and out', ptc: ms(ptc), raw: ms(raw), node: ms(node) })
  results.push({
    case: '1 MB string in and out',
    median: ptc,
    unit: 'ms',
    better: 'lower',
    baseline: { case: 'raw isolated-vm', median: raw },
  })
}

async function cpuLoop(rt: CodeRuntime): Promise<void> {
  const iterations = quickRequested ? 1e7 : 1e8
  const body = `let x = 0\nfor (let i = 0; i < ${iterations}; i++) x = (x + i) % 1000003\nreturn x`
  const ptc = await medianOf(() => timed(() => rt.run({ code: body, bindings: [], call: echo })))
  const raw = await medianOf(() => timed(() => rawRun(body)))
  const node = await medianOf(() => timed(async () => (new Function(body) as () => number)()))
  rows.push({ what: `CPU loop (${iterations.toExponential()} iterations)`, ptc: ms(ptc), raw: ms(raw), node: ms(node) })
  results.push({
    case: `CPU loop (${iterations.toExponential()} iterations)`,
    median: ptc,
    unit: 'ms',
    better: 'lower',
    baseline: { case: 'plain Node', median: node },
  })
}

async function concurrent(rt: CodeRuntime): Promise<void> {
  const TOTAL = Math.round(200 * SCALE)
  const WIDTH = 8
  const body =
    'const a = await CALL("echo", { k: 1 })\nconst b = await CALL("echo", { k: 2 })\nreturn a.args.k + b.args.k'
  const pump = async (one: () => Promise<unknown>) => {
    let next = 0
    await Promise.all(
      Array.from({ length: WIDTH }, async () => {
        while (next++ < TOTAL) await one()
      }),
    )
  }
  const code = body.replaceAll('CALL("echo", ', 'tools.echo(')
  const ptc = await medianOf(
    async () => TOTAL / ((await timed(() => pump(() => rt.run({ code, bindings: ['echo'], call: echo })))) / 1000),
  )
  const raw = await medianOf(
    async () => TOTAL / ((await timed(() => pump(() => rawRun(body.replaceAll('CALL', 'call'))))) / 1000),
  )
  rows.push({
    what: `runs/s, ${WIDTH} concurrent (2 sub-calls each)`,
    ptc: rate(ptc, 'runs/s'),
    raw: rate(raw, 'runs/s'),
    node: '',
  })
  results.push({
    case: `runs, ${WIDTH} concurrent`,
    median: ptc,
    unit: 'runs/s',
    better: 'higher',
    baseline: { case: 'raw isolated-vm', median: raw },
  })
}

const containment = process.env['CONTAINMENT'] === 'none' ? 'none' : 'process'
const rt = createIsolatedVmRuntime({ containment })
const cold = createIsolatedVmRuntime({ containment, warmIsolates: 0 })
// Let the engine processes (or the warm isolates) start before anything is timed.
await rt.run({ code: 'return 1', bindings: [], call: echo })
await cold.run({ code: 'return 1', bindings: [], call: echo })
await sleep(50)
await trivial(rt, cold)
await subCalls(rt, false)
await subCalls(rt, true)
await payload(rt)
await cpuLoop(rt)
await concurrent(rt)
await rt.dispose()
await cold.dispose()

const widths = [34, 18, 18, 16]
const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join(' | ')
console.log(`isolated-vm ${process.versions.node} node, containment ${containment}, REPS=${REPS}, medians`)
console.log(line(['scenario', 'ptc isolated-vm', 'raw isolated-vm', 'plain node']) + ' | note')
for (const r of rows) console.log(line([r.what, r.ptc, r.raw, r.node]) + (r.note ? ` | ${r.note}` : ''))
emitBenchJson(
  'sandbox/isolated-vm',
  `isolated-vm backend benchmark — node ${process.versions.node}, containment ${containment}, REPS=${REPS}, medians`,
  results,
)
