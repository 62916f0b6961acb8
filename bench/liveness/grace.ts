/**
 * The liveness grace (issue 10, SPEC section 9 "Liveness"): how long after its wall deadline a run
 * answers, per backend, for a busy loop, a long native built-in, a tool that never settles and ignores
 * its signal (through run_code: the runtime's wall plus the transport's drain grace, and the drain
 * grace alone when the program returns with the call in flight) and a run queued behind a hostile one;
 * and the CPU the process tree (threads and child processes) burns in the second after the answer.
 * The baseline, in the same process: how late a plain host `setTimeout(wallMs)` fires (the floor no
 * backend can beat on this machine at this moment).
 *
 *   node --no-node-snapshot --conditions=@ptc/source --import tsx bench/liveness/grace.ts [--iterations N] [--quick] [--backend quickjs-worker|quickjs-inline|isolated-vm]…
 *
 * `--quick`: one iteration (a smoke run). Prints a markdown table: median, min and max over the
 * iterations. Run it on a quiet machine: the figures are load-sensitive.
 */
import { createPtcExecutor } from '@ptc/ptc'
import type { CodeRunRequest, CodeRuntime, JsonValue } from '@ptc/sandbox'
import { createIsolatedVmRuntime, isolatedVmAvailability } from '@ptc/sandbox-isolated-vm'
import { createQuickJSRuntime } from '@ptc/sandbox-quickjs'
import { defineTool, ToolsService, type ToolExecutionResult } from '@ptc/tools'
import { treeCpuMs } from '../../test/security/proc.js'
import { argValues, quickRequested } from '../json.js'
import { machine, median } from '../util.js'

type Backend = 'quickjs-worker' | 'quickjs-inline' | 'isolated-vm'
const MiB = 1024 * 1024
const iterations = quickRequested ? 1 : Number(argValues('iterations')[0] ?? 5)
const filter = argValues('backend')
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))
const echo = async (name: string, args: JsonValue): Promise<JsonValue> => ({ name, args })
const never = (): Promise<JsonValue> => new Promise(() => {})

/** Options by spread, so this compiles whether or not a backend declares them yet. */
interface Extras {
  maxConcurrentRuns?: number
  maxQueuedRuns?: number
  maxExtraRuns?: number
}

function create(backend: Backend, extras: Extras = {}): CodeRuntime {
  if (backend === 'isolated-vm') return createIsolatedVmRuntime({ warmIsolates: 2, ...extras })
  return createQuickJSRuntime({ isolation: backend === 'quickjs-worker' ? 'worker' : 'inline', ...extras })
}

interface Sample {
  /** Ms past the wall deadline (or, for the drain case, past the call). */
  readonly graceMs: number
  /** CPU ms of the process tree in the 1 s after the answer, then in the second after that; undefined when not measured. */
  readonly cpuAfterMs?: readonly [number, number]
  /** Set when the case did not behave as a liveness case (e.g. the run was not queued). */
  readonly note?: string
}

interface Case {
  readonly name: string
  /** The run's wall (0 for the drain case, measured from the call). */
  wallMs(backend: Backend): number
  /** A written reason when the case does not apply to the backend. */
  readonly notFor?: Partial<Record<Backend, string>>
  measure(backend: Backend, rt: CodeRuntime): Promise<Sample>
}

/** CPU of the process tree in each of the two seconds after now (a replacement engine booting shows in the first). */
async function cpuOverTwoSeconds(): Promise<[number, number]> {
  const c0 = treeCpuMs()
  await sleep(1000)
  const c1 = treeCpuMs()
  await sleep(1000)
  return [c1 - c0, treeCpuMs() - c1]
}

/** One run: the grace past `wallMs`, and the CPU burnt in the second after the answer. */
async function timedRun(rt: CodeRuntime, request: CodeRunRequest, wallMs: number): Promise<Sample> {
  const t0 = performance.now()
  const r = await rt.run(request)
  const graceMs = performance.now() - t0 - wallMs
  const cpuAfterMs = await cpuOverTwoSeconds()
  return { graceMs, cpuAfterMs, ...(r.error?.kind !== 'timeout' && { note: `ended as ${r.error?.kind ?? 'a value'}` }) }
}

const INLINE_NATIVE = 'inline cannot preempt a native built-in (documented)'

const sortOf = (backend: Backend): string =>
  `const a = Array.from({ length: ${backend === 'isolated-vm' ? '8e6' : '1e6'} }, () => Math.random())\na.sort()\nreturn a.length`

/** A run_code host over `rt` with a tool that never settles and ignores its signal. */
function ptcHost(
  rt: CodeRuntime,
): (code: string, timeoutMs?: number) => Promise<ToolExecutionResult | 'no answer in 20 s'> {
  const hang = defineTool({
    name: 'hang',
    description: 'Never settles; ignores its signal.',
    parameters: {},
    isConcurrencySafe: () => true,
    output: { schema: { type: 'null' }, render: () => [{ type: 'text', text: 'never' }] },
    execute: () => new Promise<null>(() => {}),
  })
  const tick = defineTool({
    name: 'tick',
    description: 'Answers after a microtask.',
    parameters: {},
    output: { schema: { type: 'null' }, render: () => [{ type: 'text', text: 'tick' }] },
    isConcurrencySafe: () => true,
    execute: async () => {
      await null
      return null
    },
  })
  const tools = new ToolsService()
  tools.register(hang)
  tools.register(tick)
  tools.setExecutor(createPtcExecutor({ runtime: rt, mode: 'code', limits: { wallMs: 60_000 } }))
  let n = 0
  return async (code, timeoutMs) => {
    const args = { code, description: 'grace', ...(timeoutMs !== undefined && { timeoutMs }) }
    let timer: NodeJS.Timeout | undefined
    const guard = new Promise<'no answer in 20 s'>(
      (resolve) => (timer = setTimeout(() => resolve('no answer in 20 s'), 20_000)),
    )
    const batch = tools.execute({
      calls: [{ type: 'tool_call', id: `g${++n}`, name: 'run_code', arguments: JSON.stringify(args) }],
      signal: new AbortController().signal,
    })
    const out = await Promise.race([batch.then((b) => b.results[0]?.result ?? 'no answer in 20 s'), guard])
    clearTimeout(timer)
    return out
  }
}

const hosts = new WeakMap<CodeRuntime, ReturnType<typeof ptcHost>>()
const hostOf = (rt: CodeRuntime): ReturnType<typeof ptcHost> => {
  let h = hosts.get(rt)
  if (h === undefined) hosts.set(rt, (h = ptcHost(rt)))
  return h
}

const CASES: readonly Case[] = [
  {
    name: 'busy loop `while (true) {}`',
    wallMs: () => 500,
    measure: (_b, rt) =>
      timedRun(rt, { code: 'while (true) {}', bindings: [], call: echo, limits: { cpuMs: 60_000, wallMs: 500 } }, 500),
  },
  {
    name: 'long native built-in (default sort)',
    // V8 is still building the 8e6-number array at 700 ms; the wall must fall inside the sort.
    wallMs: (b) => (b === 'isolated-vm' ? 1500 : 700),
    notFor: { 'quickjs-inline': INLINE_NATIVE },
    measure(b, rt) {
      const wallMs = this.wallMs(b)
      return timedRun(
        rt,
        { code: sortOf(b), bindings: [], call: echo, limits: { cpuMs: 60_000, wallMs, memoryBytes: 1024 * MiB } },
        wallMs,
      )
    },
  },
  {
    name: 'run_code: awaits a tool that never settles (wall + drain)',
    wallMs: () => 500,
    async measure(_b, rt) {
      const t0 = performance.now()
      const r = await hostOf(rt)('await tools.hang({})', 500)
      const graceMs = performance.now() - t0 - 500
      return typeof r === 'string' ? { graceMs, note: r } : { graceMs, ...(!r.isError && { note: 'succeeded?' }) }
    },
  },
  {
    name: 'run_code: returns with a never-settling call in flight (drain alone)',
    wallMs: () => 0,
    async measure(_b, rt) {
      const t0 = performance.now()
      // Results commit in submission order, so the tick goes first; the hang call starts as soon as the
      // tick's policy settled, before its body answers: the hang call is in flight at the return.
      const r = await hostOf(rt)('const t = tools.tick({})\ntools.hang({}).catch(() => {})\nawait t\nreturn 1')
      const graceMs = performance.now() - t0
      return typeof r === 'string' ? { graceMs, note: r } : { graceMs, ...(r.isError && { note: 'failed' }) }
    },
  },
  {
    name: 'tool loop `for (;;) await tools.echo({})`',
    wallMs: () => 500,
    async measure(_b, rt) {
      // A 1 ms interval on the host: the longest gap between its firings is how long the run held the thread.
      let last = performance.now()
      let longest = 0
      const timer = setInterval(() => {
        const now = performance.now()
        longest = Math.max(longest, now - last)
        last = now
      }, 1)
      const t0 = performance.now()
      const r = await rt.run({
        code: 'for (;;) await tools.echo({})',
        bindings: ['echo'],
        call: echo,
        limits: { cpuMs: 60_000, wallMs: 500, maxSubCalls: 1e9 },
      })
      const graceMs = performance.now() - t0 - 500
      clearInterval(timer)
      longest = Math.max(longest, performance.now() - last)
      return {
        graceMs,
        note:
          r.error?.kind === 'timeout'
            ? `timers waited up to ${Math.round(longest)} ms`
            : `ended as ${r.error?.kind ?? 'a value'}`,
      }
    },
  },
  {
    name: 'queued behind a hostile run (maxConcurrentRuns 1, maxExtraRuns 0)',
    wallMs: () => 500,
    async measure(b) {
      // maxExtraRuns 0: the hostile run keeps its place past its first 50 ms of CPU, so the next one queues.
      const rt = create(b, { maxConcurrentRuns: 1, maxQueuedRuns: 4, maxExtraRuns: 0 })
      try {
        await rt.run({ code: 'return 0', bindings: [], call: echo, limits: { wallMs: 60_000 } })
        const blocker =
          b === 'quickjs-inline'
            ? rt.run({ code: 'await tools.hang({})', bindings: ['hang'], call: never, limits: { wallMs: 3000 } })
            : rt.run({ code: 'while (true) {}', bindings: [], call: echo, limits: { cpuMs: 60_000, wallMs: 3000 } })
        await sleep(150)
        const t0 = performance.now()
        const r = await rt.run({ code: 'return 1', bindings: [], call: echo, limits: { wallMs: 500 } })
        const graceMs = performance.now() - t0 - 500
        await rt.dispose()
        await blocker
        return {
          graceMs,
          ...(r.error?.kind !== 'timeout' && { note: `not queued: ended as ${r.error?.kind ?? 'a value'}` }),
        }
      } finally {
        await rt.dispose()
      }
    },
  },
]

/** The baseline: how late a plain host timer fires here. */
async function timerBaseline(): Promise<Sample> {
  const t0 = performance.now()
  await sleep(500)
  return { graceMs: performance.now() - t0 - 500 }
}

function fmt(values: readonly number[]): { med: string; min: string; max: string } {
  if (values.length === 0) return { med: '–', min: '–', max: '–' }
  // Math.round(-0.3) is -0, which toFixed prints as "-0": add 0 to make it 0.
  const ms = (v: number): string => String(Math.round(v) + 0)
  return { med: ms(median(values)), min: ms(Math.min(...values)), max: ms(Math.max(...values)) }
}

const backends: Backend[] = (['quickjs-worker', 'quickjs-inline', 'isolated-vm'] as const).filter(
  (b) => filter.length === 0 || filter.includes(b),
)
const ivm = isolatedVmAvailability()
const rows: string[] = []
const baseline: Sample[] = []
for (let i = 0; i < Math.max(3, iterations); i++) baseline.push(await timerBaseline())
const base = fmt(baseline.map((s) => s.graceMs))
rows.push(`| (baseline) | host setTimeout(500) fires late by | 500 | ${base.med} | ${base.min} | ${base.max} | – | |`)

for (const backend of backends) {
  if (backend === 'isolated-vm' && !ivm.available) {
    rows.push(`| isolated-vm | (skipped: ${ivm.reason}) | | | | | | |`)
    continue
  }
  const rt = create(backend)
  await rt.run({ code: 'return 0', bindings: [], call: echo, limits: { wallMs: 60_000 } })
  for (const c of CASES) {
    const reason = c.notFor?.[backend]
    if (reason !== undefined) {
      rows.push(`| ${backend} | ${c.name} | ${c.wallMs(backend)} | n/a | | | | ${reason} |`)
      continue
    }
    const samples: Sample[] = []
    for (let i = 0; i < iterations; i++) samples.push(await c.measure(backend, rt))
    const g = fmt(samples.map((s) => s.graceMs))
    const cpu0 = samples.flatMap((s) => (s.cpuAfterMs === undefined ? [] : [s.cpuAfterMs[0]]))
    const cpu1 = samples.flatMap((s) => (s.cpuAfterMs === undefined ? [] : [s.cpuAfterMs[1]]))
    const notes = [...new Set(samples.flatMap((s) => (s.note === undefined ? [] : [s.note])))].join('; ')
    rows.push(
      `| ${backend} | ${c.name} | ${c.wallMs(backend)} | ${g.med} | ${g.min} | ${g.max} | ${cpu0.length === 0 ? '–' : `${fmt(cpu0).med} / ${fmt(cpu1).med}`} | ${notes} |`,
    )
    console.error(`done: ${backend} / ${c.name}`)
  }
  await rt.dispose()
}

console.log(
  `# Liveness grace (${machine()}; ${iterations} iteration${iterations === 1 ? '' : 's'}; ${new Date().toISOString()})\n`,
)
console.log(
  'Grace: ms from the wall deadline (counted from the call) to the answer; for "drain alone", ms from the call. CPU: ms of CPU the process tree (threads and child processes) used in the first / the second second after the answer (medians; a replacement engine starting counts in the first, a guest still burning a core shows ~1000 in both).\n',
)
console.log('| backend | case | wall ms | grace median | min | max | CPU 0-1 s / 1-2 s after | notes |')
console.log('|---|---|---|---|---|---|---|---|')
for (const row of rows) console.log(row)
// Never-settling tool bodies and a stopped isolate's leftovers must not decide when this script ends.
process.exit(0)
