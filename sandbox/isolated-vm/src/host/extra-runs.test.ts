import { readdirSync, readFileSync } from 'node:fs'
import { describe, expect, test } from 'vitest'
import type { CodeRunRequest, CodeRunResult, CodeRuntime, JsonValue } from '@ptc/sandbox'
import { createIsolatedVmRuntime, isolatedVmAvailability } from '../index.js'
import { sleep } from '../test-helpers.js'
import { HOT_THREAD_NICE } from './hot-threads.js'

const availability = isolatedVmAvailability()
const linux = process.platform === 'linux'
/** Raising a thread's priority back needs privilege (root, or CAP_SYS_NICE). */
const privileged = linux && process.getuid?.() === 0

/** Polls `ready` every 20 ms until it holds or `withinMs` passed; whether it held. */
async function until(ready: () => boolean, withinMs = 60_000): Promise<boolean> {
  for (const t0 = performance.now(); !ready(); await sleep(20)) if (performance.now() - t0 > withinMs) return false
  return true
}

/** Threads of process `pid` at `nice` (Linux). */
function threadsAt(pid: number, nice: number): number {
  let count = 0
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'latin1')
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
  rt: CodeRuntime,
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

describe.skipIf(!availability.available)('runs past LONG_RUN_CPU_MS of CPU (maxExtraRuns)', () => {
  test('a long run shares its process with a fresh run, which answers while it runs on', async () => {
    const rt = createIsolatedVmRuntime({ processes: 1, maxExtraRuns: 16 })
    const stop = new AbortController()
    try {
      expect((await rt.run(short(60_000))).value).toBe(1)
      const pid = rt.processIds[0]
      const burning = burners(rt, 3, stop.signal)
      expect(await until(() => burning.started() === 3)).toBe(true)
      const fresh = await Promise.all([1, 2, 3].map(() => rt.run(short(60_000))))
      expect(fresh.map((r) => r.value)).toEqual([1, 1, 1])
      expect(rt.processIds, 'one process hosts them all').toEqual([pid])
      stop.abort()
      expect((await burning.results).map((r) => r.error?.kind)).toEqual(['abort', 'abort', 'abort'])
    } finally {
      stop.abort()
      await rt.dispose()
    }
  }, 120_000)

  test('a run that awaits a slow tool lends its place once runs wait: a fresh run answers while it waits', async () => {
    const rt = createIsolatedVmRuntime({ processes: 1, maxExtraRuns: 4 })
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
    const rt = createIsolatedVmRuntime({ processes: 1, maxExtraRuns: 0 })
    const stop = new AbortController()
    try {
      expect((await rt.run(short(60_000))).value).toBe(1)
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
    const rt = createIsolatedVmRuntime({ processes: 1, maxExtraRuns: 1 })
    const stop = new AbortController()
    try {
      expect((await rt.run(short(60_000))).value).toBe(1)
      const burning = burners(rt, 3, stop.signal)
      expect(await until(() => burning.started() === 2)).toBe(true)
      await sleep(500)
      expect(burning.started()).toBe(2)
      stop.abort()
      expect((await burning.results).map((r) => r.error?.kind)).toEqual(['abort', 'abort', 'abort'])
    } finally {
      stop.abort()
      await rt.dispose()
    }
  }, 120_000)

  test.skipIf(!linux)(
    "a long run's isolate thread yields while a fresh run wants the cores, and only then",
    async () => {
      const rt = createIsolatedVmRuntime({ processes: 1, maxExtraRuns: 16 })
      const stop = new AbortController()
      try {
        expect((await rt.run(short(60_000))).value).toBe(1)
        const pid = rt.processIds[0] as number
        const burning = burners(rt, 1, stop.signal)
        expect(await until(() => burning.started() === 1)).toBe(true)
        await sleep(300)
        expect(threadsAt(pid, HOT_THREAD_NICE), 'alone, it keeps its priority').toBe(0)
        let release!: () => void
        let inside = false
        const held = new Promise<JsonValue>((resolve) => (release = () => resolve({ v: 1 })))
        const fresh = rt.run({ ...short(60_000), call: async () => ((inside = true), held) })
        expect(await until(() => inside && threadsAt(pid, HOT_THREAD_NICE) >= 1)).toBe(true)
        release()
        expect((await fresh).value).toBe(1)
        if (privileged) expect(await until(() => threadsAt(pid, HOT_THREAD_NICE) === 0, 10_000)).toBe(true)
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
