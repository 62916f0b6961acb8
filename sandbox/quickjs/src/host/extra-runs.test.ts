import { readdirSync, readFileSync } from 'node:fs'
import { describe, expect, test } from 'vitest'
import type { CodeRunRequest, CodeRunResult, JsonValue } from '@ptc/sandbox'
import { QuickJSCodeRuntime } from '../runtime.js'
import { WorkerPool } from './pool.js'
import { LONG_RUN_NICE } from './thread-priority.js'

const WARM_BYTES = 256 * 1024 * 1024
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))
const linux = process.platform === 'linux'
/** Raising a thread's priority back needs privilege (root, or CAP_SYS_NICE). */
const privileged = linux && process.getuid?.() === 0

/** Polls `ready` every 20 ms until it holds or `withinMs` passed; whether it held. */
async function until(ready: () => boolean, withinMs = 60_000): Promise<boolean> {
  for (const t0 = performance.now(); !ready(); await sleep(20)) if (performance.now() - t0 > withinMs) return false
  return true
}

/** Threads of this process at `nice` (Linux). */
function threadsAt(nice: number): number {
  let count = 0
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'latin1')
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]) === nice) count++
    } catch {
      // the thread exited while we read
    }
  }
  return count
}

function short(wallMs: number): CodeRunRequest {
  return {
    code: 'return (await tools.echo({ v: 1 })).v',
    language: 'javascript',
    bindings: ['echo'],
    call: async (_n, a: JsonValue) => a,
    limits: { wallMs },
  }
}

/** `count` runs that each say when they start, then burn CPU until `signal` aborts. */
function burners(
  rt: QuickJSCodeRuntime,
  count: number,
  signal: AbortSignal,
): { started: () => number; results: Promise<CodeRunResult[]> } {
  let started = 0
  const runs = Array.from({ length: count }, () =>
    rt.run({
      code: 'await tools.go({})\nwhile (true) {}',
      language: 'javascript',
      bindings: ['go'],
      call: async () => (started++, null),
      limits: { cpuMs: 120_000, wallMs: 120_000 },
      signal,
    }),
  )
  return { started: () => started, results: Promise.all(runs) }
}

describe('runs past LONG_RUN_CPU_MS of CPU (maxExtraRuns)', () => {
  test('a long run lends its place: a fresh run starts on a worker booted beside it while it runs on', async () => {
    const pool = new WorkerPool({ size: 1, variant: 'quickjs', warmBytes: WARM_BYTES, maxExtraRuns: 4 })
    const rt = new QuickJSCodeRuntime({}, pool)
    const stop = new AbortController()
    try {
      const burning = burners(rt, 1, stop.signal)
      expect(await until(() => burning.started() === 1 && pool.lent === 1)).toBe(true)
      const fresh = await rt.run(short(60_000))
      expect(fresh.value).toBe(1)
      expect(pool.lent, 'the long run still runs').toBe(1)
      stop.abort()
      expect((await burning.results).map((r) => r.error?.kind)).toEqual(['abort'])
    } finally {
      stop.abort()
      await rt.dispose()
    }
  }, 120_000)

  test('a run that awaits a slow tool lends its place once runs wait: a fresh run answers while it waits', async () => {
    const pool = new WorkerPool({ size: 1, variant: 'quickjs', warmBytes: WARM_BYTES, maxExtraRuns: 4 })
    const rt = new QuickJSCodeRuntime({}, pool)
    let freshDone!: (r: CodeRunResult) => void
    const freshResult = new Promise<CodeRunResult>((resolve) => (freshDone = resolve))
    try {
      // Its tool answers only once the fresh run has: with its place kept, the fresh run would wait out its wall.
      const slow = rt.run({ ...short(20_000), call: async () => ({ v: (await freshResult).value ?? null }) })
      await sleep(100)
      const fresh = await rt.run(short(10_000))
      freshDone(fresh)
      expect(fresh.error).toBeUndefined()
      expect(fresh.value).toBe(1)
      expect((await slow).value).toBe(1)
    } finally {
      freshDone({ logs: [], stats: { cpuMs: 0, wallMs: 0, queueMs: 0, subCalls: 0 } })
      await rt.dispose()
    }
  }, 60_000)

  test('with maxExtraRuns 0 a long run keeps its place: a fresh run waits (and here ends by its wall)', async () => {
    const rt = new QuickJSCodeRuntime({ poolSize: 1, maxExtraRuns: 0 })
    const stop = new AbortController()
    try {
      const burning = burners(rt, 1, stop.signal)
      expect(await until(() => burning.started() === 1)).toBe(true)
      await sleep(200)
      const fresh = await rt.run(short(1000))
      expect(fresh.error?.kind).toBe('timeout')
      expect(fresh.error?.message).toMatch(/before the program started/)
      stop.abort()
      await burning.results
    } finally {
      stop.abort()
      await rt.dispose()
    }
  }, 60_000)

  test('maxExtraRuns caps the runs past the pool: with 1, two of three burners run and the third waits', async () => {
    const pool = new WorkerPool({ size: 1, variant: 'quickjs', warmBytes: WARM_BYTES, maxExtraRuns: 1 })
    const rt = new QuickJSCodeRuntime({}, pool)
    const stop = new AbortController()
    try {
      const burning = burners(rt, 3, stop.signal)
      expect(await until(() => burning.started() === 2)).toBe(true)
      await sleep(500)
      expect(burning.started()).toBe(2)
      expect(pool.lent).toBe(1)
      expect(pool.workers).toBeLessThanOrEqual(pool.maxWorkers)
      stop.abort()
      expect((await burning.results).map((r) => r.error?.kind)).toEqual(['abort', 'abort', 'abort'])
    } finally {
      stop.abort()
      await rt.dispose()
    }
  }, 120_000)

  test('workers past the need exit once idle: after long runs the pool is back to its size and a spare', async () => {
    const pool = new WorkerPool({ size: 1, variant: 'quickjs', warmBytes: WARM_BYTES, maxExtraRuns: 4 })
    const rt = new QuickJSCodeRuntime({}, pool)
    const stop = new AbortController()
    try {
      const burning = burners(rt, 3, stop.signal)
      expect(await until(() => burning.started() === 3)).toBe(true)
      expect(pool.workers).toBeGreaterThanOrEqual(3)
      stop.abort()
      await burning.results
      expect(await until(() => pool.workers === 2, 30_000)).toBe(true)
      expect(pool.lent).toBe(0)
      expect((await rt.run(short(60_000))).value).toBe(1)
    } finally {
      stop.abort()
      await rt.dispose()
    }
  }, 120_000)

  test.skipIf(!linux)(
    "a long run's worker thread yields while a fresh run wants the cores, and only then",
    async () => {
      const pool = new WorkerPool({ size: 1, variant: 'quickjs', warmBytes: WARM_BYTES, maxExtraRuns: 4 })
      const rt = new QuickJSCodeRuntime({}, pool)
      const stop = new AbortController()
      try {
        const before = threadsAt(LONG_RUN_NICE)
        const burning = burners(rt, 1, stop.signal)
        expect(await until(() => burning.started() === 1 && pool.lent === 1)).toBe(true)
        await sleep(100)
        expect(threadsAt(LONG_RUN_NICE), 'alone, it keeps its priority').toBe(before)
        let release!: () => void
        let inside = false
        const held = new Promise<JsonValue>((resolve) => (release = () => resolve({ v: 1 })))
        const fresh = rt.run({ ...short(60_000), call: async () => ((inside = true), held) })
        expect(await until(() => inside && threadsAt(LONG_RUN_NICE) === before + 1)).toBe(true)
        release()
        expect((await fresh).value).toBe(1)
        // Unprivileged, the thread keeps its lower priority and its worker is the last to take a run.
        if (privileged) expect(await until(() => threadsAt(LONG_RUN_NICE) === before, 10_000)).toBe(true)
        stop.abort()
        await burning.results
      } finally {
        stop.abort()
        await rt.dispose()
      }
    },
    120_000,
  )
})
