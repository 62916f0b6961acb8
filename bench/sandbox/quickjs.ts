/**
 * QuickJS backend benchmark. Run: node --conditions=@ptc/source --import tsx bench/sandbox/quickjs.ts [--quick] [--json]
 * Medians over several runs; baselines (raw quickjs-emscripten with the same call shape — inline, and
 * in a worker thread with one message each way per call for worker isolation — and plain Node)
 * measured in the same process. `--quick`: fewer repeats and sub-calls; `--json`: also print the
 * `PTC_BENCH_JSON` line (see ../json.ts).
 */
import { createQuickJSRuntime } from '@ptc/sandbox-quickjs'
import type { CodeRunRequest, CodeRuntime, JsonValue } from '@ptc/sandbox'
import { emitBenchJson, quickRequested, type BenchResult } from '../json.js'
import {
  closeRawWorker,
  median,
  medianOf,
  nodeCpuLoop,
  nodeSubCalls,
  rawCpuLoop,
  rawSubCalls,
  rawTrivialRun,
  rawWorkerSubCalls,
} from './baseline.js'

const REPEAT = quickRequested ? 3 : 7
const N = quickRequested ? 500 : 2000
const results: BenchResult[] = []
const rows: [string, string][] = []
const row = (name: string, value: string): void => {
  rows.push([name, value])
  console.log(`${name.padEnd(58)} ${value}`)
}
const call = async (name: string, args: JsonValue): Promise<JsonValue> => (name === 'big' ? BIG : args)
const BIG = 'x'.repeat(1_000_000)

async function timeRun(rt: CodeRuntime, code: string, extra: Partial<CodeRunRequest> = {}): Promise<number> {
  const t0 = performance.now()
  const r = await rt.run({ code, bindings: ['echo', 'big'], call, language: 'javascript', ...extra })
  const ms = performance.now() - t0
  if (r.error) throw new Error(`bench program failed: ${r.error.kind}: ${r.error.message}`)
  return ms
}

async function subCallUs(rt: CodeRuntime, parallel: boolean): Promise<number> {
  const code = parallel
    ? `const r = await Promise.all(Array.from({ length: ${N} }, (_, i) => tools.echo(i))); return r.length`
    : `let s = 0; for (let i = 0; i < ${N}; i++) s += await tools.echo(i); return s`
  const limits = { maxSubCalls: N, maxPendingSubCalls: N }
  const base = await medianOf(REPEAT, () => timeRun(rt, 'return 0'))
  const ms = await medianOf(REPEAT, () => timeRun(rt, code, { limits }))
  return ((ms - base) * 1000) / N
}

async function main(): Promise<void> {
  const title = `QuickJS backend benchmark — node ${process.version}, ${(await import('node:os')).availableParallelism()} cores; N = ${N} sub-calls; median of ${REPEAT}`
  console.log(title)
  const rawRun = await medianOf(REPEAT * 3, rawTrivialRun)
  row('raw library: trivial run (new runtime+context, eval, dispose)', `${rawRun.toFixed(3)} ms`)
  const rawSeq = await medianOf(REPEAT, () => rawSubCalls(N, false))
  const rawPar = await medianOf(REPEAT, () => rawSubCalls(N, true))
  const nodeSeq = await medianOf(REPEAT, () => nodeSubCalls(N, false))
  const nodePar = await medianOf(REPEAT, () => nodeSubCalls(N, true))
  // Worker isolation's baseline: the raw library in a worker thread, one postMessage each way per call.
  const rawWorkerSeq = await medianOf(REPEAT, () => rawWorkerSubCalls(N, false))
  const rawWorkerPar = await medianOf(REPEAT, () => rawWorkerSubCalls(N, true))
  await closeRawWorker()
  const raw = { inline: { seq: rawSeq, par: rawPar }, worker: { seq: rawWorkerSeq, par: rawWorkerPar } }
  row('raw library: sequential sub-call', `${rawSeq.toFixed(1)} us/call (${(1e6 / rawSeq).toFixed(0)} calls/s)`)
  row('raw library: Promise.all sub-call', `${rawPar.toFixed(1)} us/call`)
  row(
    'raw library in a worker: sequential / Promise.all sub-call',
    `${rawWorkerSeq.toFixed(1)} / ${rawWorkerPar.toFixed(1)} us/call`,
  )
  row('plain Node: sequential / Promise.all async call', `${nodeSeq.toFixed(2)} / ${nodePar.toFixed(2)} us/call`)
  const rawCpu = await medianOf(REPEAT, () => rawCpuLoop(1e6))
  const nodeCpu = median(Array.from({ length: REPEAT }, () => nodeCpuLoop(1e6)))

  for (const isolation of ['inline', 'worker'] as const) {
    const t0 = performance.now()
    const rt = createQuickJSRuntime({ isolation, poolSize: 2 })
    await timeRun(rt, 'return 1')
    row(
      `${isolation}: cold first run (runtime created, module/worker start)`,
      `${(performance.now() - t0).toFixed(1)} ms`,
    )
    const warm = await medianOf(REPEAT * 5, () => timeRun(rt, 'return 1'))
    row(`${isolation}: warm trivial run`, `${warm.toFixed(3)} ms (${(warm / rawRun).toFixed(2)}x raw)`)
    results.push({
      group: isolation,
      case: 'warm trivial run',
      median: warm,
      unit: 'ms',
      better: 'lower',
      baseline: { case: 'raw library trivial run', median: rawRun },
    })
    // A harness's own memory limit (here 64 MiB), other than the runtime's default the engines were warmed for.
    const own = await medianOf(REPEAT * 5, () => timeRun(rt, 'return 1', { limits: { memoryBytes: 64 * 1024 * 1024 } }))
    row(
      `${isolation}: warm trivial run, memoryBytes 64 MiB per run`,
      `${own.toFixed(3)} ms (${(own / warm).toFixed(2)}x the default limit's)`,
    )
    results.push({
      group: isolation,
      case: 'warm trivial run, memoryBytes 64 MiB per run',
      median: own,
      unit: 'ms',
      better: 'lower',
      baseline: { case: 'warm trivial run', median: warm },
    })
    const ts = await medianOf(REPEAT * 5, () =>
      timeRun(rt, 'const x: number = 1\nreturn x', { language: 'typescript' }),
    )
    row(`${isolation}: warm trivial run, TypeScript`, `${ts.toFixed(3)} ms`)
    const seq = await subCallUs(rt, false)
    row(
      `${isolation}: sequential sub-call`,
      `${seq.toFixed(1)} us/call (${(1e6 / seq).toFixed(0)} calls/s, ${((raw[isolation].seq / seq) * 100).toFixed(0)}% of raw ${isolation} rate, ${(seq / nodeSeq).toFixed(0)}x Node)`,
    )
    results.push({
      group: isolation,
      case: 'sequential sub-call',
      median: seq,
      unit: 'us/call',
      better: 'lower',
      baseline: { case: `raw library (${isolation})`, median: raw[isolation].seq },
    })
    const par = await subCallUs(rt, true)
    results.push({
      group: isolation,
      case: 'Promise.all sub-call',
      median: par,
      unit: 'us/call',
      better: 'lower',
      baseline: { case: `raw library (${isolation})`, median: raw[isolation].par },
    })
    row(
      `${isolation}: Promise.all sub-call`,
      `${par.toFixed(1)} us/call (${((raw[isolation].par / par) * 100).toFixed(0)}% of raw ${isolation} rate)`,
    )
    const bigOut = await medianOf(REPEAT, () => timeRun(rt, 'const s = await tools.big({}); return s.length'))
    const bigIn = await medianOf(REPEAT, () => timeRun(rt, 'await tools.echo({ s: "y".repeat(1000000) }); return 1'))
    const bigRet = await medianOf(REPEAT, () => timeRun(rt, 'return "z".repeat(999000)'))
    row(
      `${isolation}: 1 MB result in / argument out / return value`,
      `${bigOut.toFixed(1)} / ${bigIn.toFixed(1)} / ${bigRet.toFixed(1)} ms`,
    )
    const cpu = await medianOf(REPEAT, () => timeRun(rt, 'let x = 0; for (let i = 0; i < 1e6; i++) x += i; return x'))
    row(
      `${isolation}: CPU loop 1e6`,
      `${cpu.toFixed(1)} ms (raw ${rawCpu.toFixed(1)} ms, Node ${nodeCpu.toFixed(2)} ms)`,
    )
    results.push({
      group: isolation,
      case: 'CPU loop 1e6',
      median: cpu,
      unit: 'ms',
      better: 'lower',
      baseline: { case: 'raw library', median: rawCpu },
    })
    const busy = await medianOf(3, async () => {
      const t = performance.now()
      await Promise.all(Array.from({ length: 200 }, () => timeRun(rt, 'await tools.echo(1); return 1')))
      return 200 / ((performance.now() - t) / 1000)
    })
    row(`${isolation}: runs/s with 200 concurrent runs (1 sub-call each)`, `${busy.toFixed(0)} runs/s`)
    results.push({
      group: isolation,
      case: '200 concurrent runs (1 sub-call each)',
      median: busy,
      unit: 'runs/s',
      better: 'higher',
    })
    await rt.dispose()
  }
  emitBenchJson('sandbox/quickjs', title, results)
}

await main()
