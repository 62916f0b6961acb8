/**
 * The first run of a QuickJS runtime, each measured in a fresh process (nothing loaded, nothing cached),
 * the cases interleaved process by process: asked at once after `createQuickJSRuntime`, and asked 1 s later
 * (a harness creates its runtime at start and gets its first `run_code` later), with the engines prewarmed
 * at creation (default) and without (`prewarm: false`, as before prewarming). The time is from the run
 * being asked to its answer; the first group also counts the creation.
 *
 *   node --import tsx bench/sandbox/cold-start.ts [processes per case, default 5]
 */
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { machine, median } from '../util.js'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))

interface Case {
  readonly isolation: 'worker' | 'inline'
  readonly prewarm: boolean
  /** How long after creating the runtime the first run is asked (ms). */
  readonly askAfterMs: number
}

/** The child: creates a runtime, waits, times its first run, prints the milliseconds. */
const CHILD = `
import { createQuickJSRuntime } from '@ptc/sandbox-quickjs'
const [isolation, prewarm, askAfterMs] = process.argv.slice(-3)
const created = performance.now()
const runtime = createQuickJSRuntime({ isolation, poolSize: 2, prewarm: prewarm === 'true' })
if (Number(askAfterMs) > 0) await new Promise((resolve) => setTimeout(resolve, Number(askAfterMs)))
const asked = performance.now()
const result = await runtime.run({ code: 'return 1', bindings: [], call: async () => null })
const answered = performance.now()
if (result.value !== 1) throw new Error(JSON.stringify(result))
console.log(JSON.stringify({ fromAsk: answered - asked, fromCreate: answered - created }))
await runtime.dispose()
`

function measure(c: Case): { fromAsk: number; fromCreate: number } {
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', CHILD, '--', c.isolation, String(c.prewarm), String(c.askAfterMs)], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env, NODE_OPTIONS: '' },
    timeout: 60_000,
  })
  if (child.status !== 0) throw new Error(`child failed: ${child.stderr}`)
  return JSON.parse(child.stdout.trim().split('\n').at(-1) as string) as { fromAsk: number; fromCreate: number }
}

const processes = Number(process.argv[2] ?? 5)
const cases: Case[] = []
for (const isolation of ['worker', 'inline'] as const) for (const askAfterMs of [0, 1000]) for (const prewarm of [false, true]) cases.push({ isolation, prewarm, askAfterMs })
const samples = new Map<Case, number[]>(cases.map((c) => [c, []]))
for (let i = 0; i < processes; i++) for (const c of cases) samples.get(c)?.push(measure(c).fromAsk)

console.log(`QuickJS first run, ${processes} fresh processes per case, interleaved; ${machine()}`)
console.log('| isolation | first run asked | prewarm: false | prewarm: true (default) |')
console.log('|---|---|---|---|')
const cell = (values: readonly number[]): string => `${median(values).toFixed(1)} ms (${Math.min(...values).toFixed(1)}-${Math.max(...values).toFixed(1)})`
for (const isolation of ['worker', 'inline'] as const) {
  for (const askAfterMs of [0, 1000]) {
    const of = (prewarm: boolean): number[] => samples.get(cases.find((c) => c.isolation === isolation && c.prewarm === prewarm && c.askAfterMs === askAfterMs) as Case) ?? []
    console.log(`| ${isolation} | ${askAfterMs === 0 ? 'at creation' : `${askAfterMs} ms after creation`} | ${cell(of(false))} | ${cell(of(true))} |`)
  }
}
