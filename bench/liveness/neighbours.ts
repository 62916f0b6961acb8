/**
 * Noisy neighbours (issue 47, section 1), per backend: how short programs fare beside programs that burn CPU, and
 * how one agent's single program fares behind another agent's flood. Each case runs against its baseline in the
 * same process: `maxExtraRuns: 0` (runs past 50 ms of CPU keep their places, as before) and the shared tenant (one
 * FIFO queue, as before).
 *
 * - "alone": 90 one-line programs that each make one sub-call, one every 20 ms, nothing else running.
 * - "10 burners running": the same once 10 programs that burn CPU (`while (true) {}`, CPU budget 10 s) run;
 *   the burners are aborted once the short programs have answered.
 * - "beside 10 burners (300 ms)": the measure: 10 burners with a CPU budget of 300 ms, started with the
 *   first short program (a burst: engines past the pool's are booted then).
 * - "flood": one tenant submits 200 short programs at once, then another submits one: its latency.
 *
 *   node --no-node-snapshot --import tsx bench/liveness/neighbours.ts \
 *     [--quick] [--rounds N] [--backend quickjs|isolated-vm]…
 *
 * Short programs have a wall of 1 500 ms (the measure); a failure counts as a miss. Prints a markdown
 * table: successes, p50 / p99 / max latency (ms from the `run()` call to the answer), the peak of the process
 * tree's threads and its RSS at the end. Load-sensitive: record figures from a quiet machine.
 */
import type { CodeRunRequest, CodeRunResult, CodeRuntime, JsonValue } from '@ptc/sandbox'
import { createIsolatedVmRuntime, isolatedVmAvailability } from '@ptc/sandbox-isolated-vm'
import { createQuickJSRuntime } from '@ptc/sandbox-quickjs'
import { argValues, quickRequested } from '../json.js'
import { machine } from '../util.js'
import { treeRssMiB, treeThreads } from './tree.js'

type Backend = 'quickjs' | 'isolated-vm'
const filter = argValues('backend')
const rounds = quickRequested ? 1 : Number(argValues('rounds')[0] ?? 3)
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))
/** Between two short programs: 50 a second, which isolated-vm serves on this machine with nothing else running. */
const SPACING_MS = 20
/** The host tool: answers after a microtask, as a realistic tool does. */
const echo = async (_name: string, args: JsonValue): Promise<JsonValue> => {
  await null
  return args
}

function short(tenant: string | undefined, wallMs = 1500): CodeRunRequest {
  return {
    code: 'return (await tools.echo({ v: 1 })).v',
    language: 'javascript',
    bindings: ['echo'],
    call: echo,
    limits: { wallMs },
    ...(tenant !== undefined && { tenant }),
  }
}

interface Timed {
  readonly ok: boolean
  readonly ms: number
  readonly kind?: string
}

async function timed(rt: CodeRuntime, request: CodeRunRequest): Promise<Timed> {
  const t0 = performance.now()
  const r: CodeRunResult = await rt.run(request)
  return {
    ok: r.error === undefined && r.value === 1,
    ms: performance.now() - t0,
    ...(r.error !== undefined && { kind: r.error.kind }),
  }
}

/** The peak of the process tree's threads, sampled every 20 ms until the returned function is called. */
function peakThreads(): () => number {
  let peak = treeThreads()
  const timer = setInterval(() => (peak = Math.max(peak, treeThreads())), 20)
  return () => {
    clearInterval(timer)
    return peak
  }
}

/** `count` burners (each says when it starts, then loops); resolves once all started or `patienceMs` passed. */
async function burners(
  rt: CodeRuntime,
  count: number,
  cpuMs: number,
  signal: AbortSignal,
  patienceMs: number,
): Promise<Promise<unknown>[]> {
  let started = 0
  const call = async (): Promise<JsonValue> => (started++, null)
  const runs = Array.from({ length: count }, () =>
    rt.run({
      code: 'await tools.go({})\nwhile (true) {}',
      language: 'javascript',
      bindings: ['go'],
      call,
      limits: { cpuMs, wallMs: 60_000 },
      signal,
      tenant: 'burners',
    }),
  )
  const t0 = performance.now()
  while (started < count && performance.now() - t0 < patienceMs) await sleep(10)
  return runs
}

/** 90 short programs, one every `SPACING_MS`, from 9 tenants. */
async function shortPrograms(rt: CodeRuntime): Promise<Timed[]> {
  const runs: Promise<Timed>[] = []
  for (let i = 0; i < 90; i++) {
    runs.push(timed(rt, short(`agent-${i % 9}`)))
    await sleep(SPACING_MS)
  }
  return Promise.all(runs)
}

function pct(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN
}

const ms = (v: number): string => (Number.isFinite(v) ? String(Math.round(v)) : '–')

function row(backend: Backend, config: string, name: string, out: readonly Timed[], peak: number): string {
  const lat = out.map((t) => t.ms)
  const kinds = [...new Set(out.flatMap((t) => (t.kind === undefined ? [] : [t.kind])))].join(', ')
  const ok = `${out.filter((t) => t.ok).length}/${out.length}`
  const latency = `${ms(pct(lat, 50))} | ${ms(pct(lat, 99))} | ${ms(Math.max(...lat))}`
  return `| ${backend} | ${config} | ${name} | ${ok} | ${latency} | ${peak} | ${ms(treeRssMiB())} | ${kinds} |`
}

function create(backend: Backend, maxExtraRuns: number | undefined): CodeRuntime {
  const extra = maxExtraRuns === undefined ? {} : { maxExtraRuns }
  return backend === 'isolated-vm' ? createIsolatedVmRuntime(extra) : createQuickJSRuntime(extra)
}

const rows: string[] = []
const backends = (['quickjs', 'isolated-vm'] as const).filter((b) => filter.length === 0 || filter.includes(b))
for (const backend of backends) {
  if (backend === 'isolated-vm' && !isolatedVmAvailability().available) {
    rows.push(`| isolated-vm | | (skipped: not available) | | | | | | | |`)
    continue
  }
  for (let round = 0; round < rounds; round++) {
    for (const [config, extra] of [
      ['maxExtraRuns 0 (before; isolated-vm default)', 0],
      ['maxExtraRuns 16 (QuickJS default)', 16],
    ] as const) {
      const rt = create(backend, extra)
      try {
        for (let i = 0; i < 5; i++) await rt.run(short(undefined, 60_000))
        let stop = peakThreads()
        rows.push(row(backend, config, '90 short, alone', await shortPrograms(rt), stop()))

        stop = peakThreads()
        const controller = new AbortController()
        const running = await burners(rt, 10, 30_000, controller.signal, extra === 0 ? 3000 : 30_000)
        const beside = await shortPrograms(rt)
        controller.abort()
        await Promise.all(running)
        rows.push(row(backend, config, '90 short, 10 burners running', beside, stop()))

        stop = peakThreads()
        const burst = new AbortController()
        const started = burners(rt, 10, 300, burst.signal, 0)
        const together = await shortPrograms(rt)
        await Promise.all(await started)
        rows.push(row(backend, config, '90 short, beside 10 burners (300 ms) started with them', together, stop()))
        console.error(`done: ${backend} / ${config}`)
      } finally {
        await rt.dispose()
      }
    }
    // The flood: one runtime with the default options; the baseline is the victim in the flooder's (shared) queue.
    const rt = create(backend, undefined)
    try {
      for (let i = 0; i < 5; i++) await rt.run(short(undefined, 60_000))
      for (const [config, flooder, victim] of [
        ['shared tenant (before)', undefined, undefined],
        ['tenant per agent', 'flooder', 'victim'],
      ] as const) {
        const stop = peakThreads()
        const t0 = performance.now()
        const flood = Array.from({ length: 200 }, () => rt.run(short(flooder, 60_000)))
        await sleep(5)
        const one = await timed(rt, short(victim, 60_000))
        await Promise.all(flood)
        const drained = performance.now() - t0
        rows.push(
          row(
            backend,
            config,
            `flood of 200 short, then another agent's one (flood drained in ${ms(drained)} ms)`,
            [one],
            stop(),
          ),
        )
      }
    } finally {
      await rt.dispose()
    }
  }
}

console.log(
  `# Noisy neighbours (${machine()}; ${rounds} round${rounds === 1 ? '' : 's'}; ${new Date().toISOString()})\n`,
)
console.log(
  "Latency: ms from the `run()` call to the answer (for the flood, of the other agent's one program). Threads: the " +
    "peak of the process tree's threads during the case. RSS: the process tree at the end of the case.\n",
)
console.log('| backend | config | case | succeeded | p50 | p99 | max | threads (peak) | RSS MiB | failures |')
console.log('|---|---|---|---|---|---|---|---|---|---|')
for (const r of rows) console.log(r)
// A stopped guest's leftovers must not decide when this script ends.
process.exit(0)
