import { expect, test } from 'vitest'
import { seededRandom } from '@ptc/sandbox/conformance'
import type { CodeRunRequest, CodeRunResult, JsonValue } from '@ptc/sandbox'
import { WorkerPool } from './host/pool.js'
import { QuickJSCodeRuntime } from './runtime.js'

/** Set `CHAOS_SEED` to replay a run; every run prints its seed. */
const SEED = process.env.CHAOS_SEED === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(process.env.CHAOS_SEED)
const RUNS = 500
/** Runs in flight at once (the pool has 2 workers: the others wait in the runtime's queue). */
const IN_FLIGHT = 6
/** How long past its wall a run may take to settle before the test calls it stuck (generous: no timing claim). */
const SETTLE_BOUND_MS = 3000
const HOSTILE = 'const a = new Array(1e6).fill(123456789); for (;;) a.join()'
const BENIGN = 'let s = 0; for (let i = 0; i < N; i++) s += (await tools.add({ a: i, b: 1 })).sum; return s'

type Kind = 'benign' | 'hostile' | 'aborted-benign' | 'aborted-hostile'

interface Plan {
  kind: Kind
  request: CodeRunRequest
  wallMs: number
  /** The benign program's value. */
  expected?: number
  abortAfterMs?: number
}

function plan(random: () => number): Plan {
  const r = random()
  const n = Math.floor(random() * 6)
  // Host calls answer after a microtask, a macrotask or a short timer, at random.
  const delay = random()
  const call = async (_name: string, args: JsonValue): Promise<JsonValue> => {
    if (delay < 0.4) await null
    else if (delay < 0.8) await new Promise((resolve) => setImmediate(resolve))
    else await new Promise((resolve) => setTimeout(resolve, 1 + Math.floor(delay * 5)))
    const { a, b } = args as { a: number; b: number }
    return { sum: a + b }
  }
  const base = { bindings: ['add'], call, language: 'javascript' as const }
  if (r < 0.05) {
    const wallMs = 150 + Math.floor(random() * 350)
    return { kind: 'hostile', wallMs, request: { ...base, code: HOSTILE, limits: { wallMs, cpuMs: 60_000 } } }
  }
  if (r < 0.08) {
    const wallMs = 5000
    return {
      kind: 'aborted-hostile',
      wallMs,
      abortAfterMs: Math.floor(random() * 300),
      request: { ...base, code: HOSTILE, limits: { wallMs, cpuMs: 60_000 } },
    }
  }
  const wallMs = 30_000
  const request = { ...base, code: BENIGN.replace('N', String(n)), limits: { wallMs } }
  const expected = (n * (n + 1)) / 2
  if (r < 0.2) return { kind: 'aborted-benign', wallMs, expected, abortAfterMs: Math.floor(random() * 40), request }
  return { kind: 'benign', wallMs, expected, request }
}

test(`500 runs on a 2-worker pool with worker terminations and aborts at random points all settle (seed printed)`, async () => {
  console.log(`chaos seed: ${SEED} (replay with CHAOS_SEED=${SEED})`)
  const random = seededRandom(SEED)
  // Drawn up front: the seed fixes every run's program, limits and abort moment (not the interleaving).
  const plans = Array.from({ length: RUNS }, () => plan(random))
  const pool = new WorkerPool({ size: 2, variant: 'quickjs', warmBytes: 256 * 1024 * 1024 })
  const runtime = new QuickJSCodeRuntime({}, pool)
  const counts: Record<string, number> = {}
  const failures: string[] = []
  let maxWorkers = 0
  const t0 = performance.now()

  const one = async (index: number): Promise<void> => {
    const p = plans[index] as Plan
    const controller = new AbortController()
    const request: CodeRunRequest =
      p.abortAfterMs === undefined ? p.request : { ...p.request, signal: controller.signal }
    const abortTimer = p.abortAfterMs === undefined ? undefined : setTimeout(() => controller.abort(), p.abortAfterMs)
    let stuck: ReturnType<typeof setTimeout> | undefined
    const bound = new Promise<'stuck'>(
      (resolve) => (stuck = setTimeout(() => resolve('stuck'), p.wallMs + SETTLE_BOUND_MS)),
    )
    const outcome: CodeRunResult | 'stuck' = await Promise.race([runtime.run(request), bound])
    clearTimeout(stuck)
    clearTimeout(abortTimer)
    maxWorkers = Math.max(maxWorkers, pool.workers)
    const label = `run ${index} (${p.kind}, seed ${SEED})`
    if (outcome === 'stuck') {
      failures.push(`${label}: did not settle within its wall + ${SETTLE_BOUND_MS} ms`)
      return
    }
    const kind = outcome.error?.kind ?? 'ok'
    counts[`${p.kind}: ${kind}`] = (counts[`${p.kind}: ${kind}`] ?? 0) + 1
    const ok =
      p.kind === 'benign'
        ? outcome.error === undefined && outcome.value === p.expected
        : p.kind === 'hostile'
          ? kind === 'timeout'
          : p.kind === 'aborted-hostile'
            ? kind === 'abort'
            : kind === 'abort' || (outcome.error === undefined && outcome.value === p.expected)
    if (!ok) failures.push(`${label}: ${JSON.stringify(outcome)}`)
  }

  try {
    let next = 0
    const lane = async (): Promise<void> => {
      while (next < RUNS) await one(next++)
    }
    await Promise.all(Array.from({ length: IN_FLIGHT }, lane))
    const final = await runtime.run({
      code: 'return (await tools.add({ a: 40, b: 2 })).sum',
      bindings: ['add'],
      call: async (_n, args) => ({ sum: (args as { a: number; b: number }).a + 2 }),
    })
    console.log(
      `chaos seed ${SEED}: ${RUNS} runs in ${Math.round(performance.now() - t0)} ms, ${pool.spawned} workers spawned;`,
      JSON.stringify(counts),
    )
    expect(failures).toEqual([])
    expect(final.value).toBe(42)
    expect(maxWorkers).toBeLessThanOrEqual(2)
    expect(pool.workers).toBe(2)
  } finally {
    await runtime.dispose()
  }
  expect(pool.exiting).toBe(0)
}, 180_000)
