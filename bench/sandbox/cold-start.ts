/**
 * The first run of a runtime, each measured in a fresh process (nothing loaded, nothing cached), the cases
 * interleaved process by process: asked at once after the runtime is created, and asked 1 s later (a harness
 * creates its runtime at start and gets its first `run_code` later); QuickJS with its engines prewarmed at
 * creation (default) and without (`prewarm: false`); isolated-vm (process containment, 2 child processes,
 * which start with the runtime) when it is available. The first program is TypeScript (`return 1`, which waits
 * for the stripper), and at creation also JavaScript for QuickJS. The time is from the run being asked to its
 * answer; the first group also counts the creation.
 *
 *   node --no-node-snapshot --import tsx bench/sandbox/cold-start.ts [processes per case, default 5] [--compare DIR]
 *
 * (`--no-node-snapshot` only lets this process see that isolated-vm is available: each measuring process gets
 * its own flags.)
 *
 * `--compare DIR`: the same cases also run in another built checkout of this repository (DIR), interleaved
 * process by process with this one, and reported beside it.
 */
import { isolatedVmAvailability } from '@ptc/sandbox-isolated-vm'
import { machine } from '../util.js'
import { compared, freshProcessJson, msCell, processes, roots } from './fresh-process.js'

type Backend = 'worker' | 'inline' | 'isolated-vm'

interface Case {
  readonly backend: Backend
  readonly prewarm: boolean
  /** How long after creating the runtime the first run is asked (ms). */
  readonly askAfterMs: number
  /** The first program's language: TypeScript waits for the stripper, JavaScript does not. */
  readonly language: 'typescript' | 'javascript'
}

/** The child: creates a runtime, waits, times its first run, prints the milliseconds. */
const CHILD = `
const [backend, prewarm, askAfterMs, language] = process.argv.slice(-4)
const created = performance.now()
const runtime = backend === 'isolated-vm'
  ? (await import('@ptc/sandbox-isolated-vm')).createIsolatedVmRuntime({ processes: 2 })
  : (await import('@ptc/sandbox-quickjs')).createQuickJSRuntime({ isolation: backend, poolSize: 2, prewarm: prewarm === 'true' })
if (Number(askAfterMs) > 0) await new Promise((resolve) => setTimeout(resolve, Number(askAfterMs)))
const asked = performance.now()
const result = await runtime.run({ code: 'return 1', bindings: [], call: async () => null, language })
const answered = performance.now()
if (result.value !== 1) throw new Error(JSON.stringify(result))
console.log(JSON.stringify({ fromAsk: answered - asked, fromCreate: answered - created }))
await runtime.dispose()
`

function measure(root: string, c: Case): number {
  // isolated-vm needs Node without its startup snapshot (its own process; QuickJS's run as users start Node).
  const flags = c.backend === 'isolated-vm' ? ['--no-node-snapshot'] : []
  const args = [c.backend, String(c.prewarm), String(c.askAfterMs), c.language]
  return (freshProcessJson(root, CHILD, { flags, args, timeoutMs: 60_000 }) as { fromAsk: number }).fromAsk
}

const backends: Backend[] = isolatedVmAvailability().available
  ? ['worker', 'inline', 'isolated-vm']
  : ['worker', 'inline']
const cases: Case[] = []
for (const backend of backends) {
  for (const askAfterMs of [0, 1000])
    for (const prewarm of backend === 'isolated-vm' ? [true] : [false, true])
      cases.push({ backend, prewarm, askAfterMs, language: 'typescript' })
  // A JavaScript first run at creation: what the TypeScript stripper's load costs it, or does not.
  if (backend !== 'isolated-vm')
    for (const prewarm of [false, true]) cases.push({ backend, prewarm, askAfterMs: 0, language: 'javascript' })
}
const samples = new Map<string, number[]>()
const key = (root: string, c: Case): string => `${root}|${c.backend}|${c.prewarm}|${c.askAfterMs}|${c.language}`
for (let i = 0; i < processes; i++) {
  for (const c of cases) {
    for (const root of roots) {
      const k = key(root, c)
      samples.set(k, [...(samples.get(k) ?? []), measure(root, c)])
    }
  }
}

console.log(
  `First run, ${processes} fresh processes per case, interleaved; ${machine()}${compared === undefined ? '' : `; "before": ${compared}`}`,
)
const cell = (values: readonly number[] | undefined): string => (values === undefined ? '–' : msCell(values))
const columns = roots.flatMap((root, i) =>
  [false, true].map((prewarm) => ({
    root,
    prewarm,
    title: `${i === 0 ? '' : 'before: '}prewarm: ${prewarm}${prewarm ? ' (default)' : ''}`,
  })),
)
console.log(`| backend | first run asked | ${columns.map((c) => c.title).join(' | ')} |`)
console.log(`|---|---|${columns.map(() => '---|').join('')}`)
for (const backend of backends) {
  // One row per (askAfterMs, language) the cases of this backend have, in the order they were made.
  const rows = new Map(
    cases.filter((c) => c.backend === backend).map((c) => [`${c.askAfterMs}|${c.language}`, c] as const),
  )
  for (const { askAfterMs, language } of rows.values()) {
    const cells = columns.map((col) =>
      cell(samples.get(key(col.root, { backend, prewarm: col.prewarm, askAfterMs, language }))),
    )
    const asked = `${askAfterMs === 0 ? 'at creation' : `${askAfterMs} ms after creation`}${language === 'javascript' ? ', JavaScript' : ''}`
    console.log(
      `| ${backend === 'isolated-vm' ? 'isolated-vm (2 processes)' : `QuickJS ${backend}`} | ${asked} | ${cells.join(' | ')} |`,
    )
  }
}
