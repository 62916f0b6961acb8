import { describe, expect, test } from 'vitest'
import { SandboxUsageError } from '@ptc/sandbox'
import type { CodeRunRequest, CodeRunResult, CodeRuntime, JsonValue } from '@ptc/sandbox'
import { createQuickJSRuntime, type QuickJSRuntimeOptions } from './index.js'

/** Generous bound past a wall ceiling for an answer (the measured figures are in the change's report). */
const BOUND_MS = 1500
const HOSTILE = 'const a = new Array(2e6).fill(123456789); for (;;) a.join()'
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

function request(code: string, extra: Partial<CodeRunRequest> = {}): CodeRunRequest {
  return { code, bindings: ['hold', 'meet'], call: async () => null, language: 'javascript', ...extra }
}

async function timed(p: Promise<CodeRunResult>): Promise<{ result: CodeRunResult; elapsedMs: number }> {
  const t0 = performance.now()
  const result = await p
  return { result, elapsedMs: performance.now() - t0 }
}

async function using<T>(rt: CodeRuntime, fn: (rt: CodeRuntime) => Promise<T>): Promise<T> {
  try {
    return await fn(rt)
  } finally {
    await rt.dispose()
  }
}

/** A run that holds its place until `release()` (its one host call answers then). */
function holder(rt: CodeRuntime): { result: Promise<CodeRunResult>; started: Promise<void>; release(): void } {
  let release!: () => void
  let started!: () => void
  const released = new Promise<JsonValue>((resolve) => (release = () => resolve('released')))
  const startedP = new Promise<void>((resolve) => (started = resolve))
  const result = rt.run(request('return await tools.hold({})', { call: async () => (started(), released) }))
  return { result, started: startedP, release }
}

/**
 * How many runs are inside their `meet` call at once, at most: each call waits until `goal` calls are
 * inside (or `patienceMs` passed), so the runs that can overlap do, without relying on timing.
 */
async function maxOverlap(rt: CodeRuntime, runs: number, goal: number, patienceMs: number): Promise<number> {
  let inside = 0
  let most = 0
  const waiters: (() => void)[] = []
  const meet = async (): Promise<JsonValue> => {
    inside++
    most = Math.max(most, inside)
    if (inside >= goal) for (const w of waiters.splice(0)) w()
    else await Promise.race([new Promise<void>((resolve) => waiters.push(resolve)), sleep(patienceMs)])
    inside--
    return null
  }
  const results = await Promise.all(
    Array.from({ length: runs }, (_, i) =>
      rt.run(request(`await tools.meet({}); return ${i}`, { call: meet, limits: { wallMs: 30_000 } })),
    ),
  )
  expect(results.map((r) => r.value)).toEqual(Array.from({ length: runs }, (_, i) => i))
  return most
}

describe('waiting for an engine counts against the wall ceiling', () => {
  test('a 500 ms run queued behind hostile runs answers by its wall as timeout, with the wait in queueMs', async () => {
    // maxExtraRuns 0: the hostile runs keep their places, so the run waits (by default it would start beside them).
    await using(createQuickJSRuntime({ poolSize: 1, maxExtraRuns: 0 }), async (rt) => {
      expect((await rt.run(request('return 0'))).value).toBe(0)
      const hostile = [0, 1].map(() => timed(rt.run(request(HOSTILE, { limits: { wallMs: 3000, cpuMs: 60_000 } }))))
      await sleep(50)
      const { result, elapsedMs } = await timed(rt.run(request('return 1', { limits: { wallMs: 500 } })))
      expect(result.error?.kind).toBe('timeout')
      expect(result.error?.message).toMatch(/before the program started/)
      expect(result.stats.queueMs).toBeGreaterThan(0)
      expect(result.stats.wallMs).toBeGreaterThanOrEqual(result.stats.queueMs)
      expect(elapsedMs).toBeLessThan(500 + BOUND_MS)
      for (const h of await Promise.all(hostile)) {
        expect(h.result.error?.kind).toBe('timeout')
        expect(h.elapsedMs).toBeLessThan(3000 + BOUND_MS)
      }
      expect((await rt.run(request('return 2'))).value).toBe(2)
    })
  }, 30_000)

  test('queueMs is reported: the time a run waited for a place behind another one, and small on an idle engine', async () => {
    await using(createQuickJSRuntime({ poolSize: 1 }), async (rt) => {
      const idle = await rt.run(request('return 0'))
      expect(idle.stats.queueMs).toBeGreaterThanOrEqual(0)
      expect(idle.stats.queueMs).toBeLessThanOrEqual(idle.stats.wallMs)
      const first = rt.run(request('await tools.hold({}); return 1', { call: () => sleep(300).then(() => null) }))
      const second = await rt.run(request('return 2'))
      expect(second.value).toBe(2)
      // It waited at least for the 300 ms host call of the run ahead of it.
      expect(second.stats.queueMs).toBeGreaterThanOrEqual(200)
      expect(second.stats.wallMs).toBeGreaterThanOrEqual(second.stats.queueMs)
      expect((await first).value).toBe(1)
    })
  }, 30_000)

  test('runs queued behind a hostile run each settle by their own wall, with their value or timeout', async () => {
    await using(createQuickJSRuntime({ poolSize: 1 }), async (rt) => {
      await rt.run(request('return 0'))
      const hostile = timed(rt.run(request(HOSTILE, { limits: { wallMs: 1000, cpuMs: 60_000 } })))
      const queued = Array.from({ length: 20 }, (_, i) =>
        timed(rt.run(request(`return ${i}`, { limits: { wallMs: 2000 + 100 * i } }))),
      )
      expect((await hostile).result.error?.kind).toBe('timeout')
      const settled = await Promise.all(queued)
      settled.forEach(({ result, elapsedMs }, i) => {
        if (result.error === undefined) expect(result.value).toBe(i)
        else expect(result.error.kind).toBe('timeout')
        expect(elapsedMs).toBeLessThan(2000 + 100 * i + BOUND_MS)
      })
      expect((await rt.run(request('return "after"'))).value).toBe('after')
    })
  }, 60_000)
})

describe('maxConcurrentRuns and maxQueuedRuns', () => {
  test('worker isolation: by default as many runs at once as workers; maxConcurrentRuns lowers it', async () => {
    expect(await using(createQuickJSRuntime({ poolSize: 2 }), (rt) => maxOverlap(rt, 4, 2, 5000))).toBe(2)
    expect(
      await using(createQuickJSRuntime({ poolSize: 2, maxConcurrentRuns: 1 }), (rt) => maxOverlap(rt, 3, 2, 200)),
    ).toBe(1)
  }, 60_000)

  test('inline isolation: maxConcurrentRuns runs at once', async () => {
    expect(
      await using(createQuickJSRuntime({ isolation: 'inline', maxConcurrentRuns: 3 }), (rt) =>
        maxOverlap(rt, 5, 3, 5000),
      ),
    ).toBe(3)
    expect(
      await using(createQuickJSRuntime({ isolation: 'inline', maxConcurrentRuns: 1 }), (rt) =>
        maxOverlap(rt, 3, 2, 200),
      ),
    ).toBe(1)
  }, 60_000)

  test('a run past maxQueuedRuns ends as limit at once; the waiting run goes on', async () => {
    await using(createQuickJSRuntime({ poolSize: 1, maxQueuedRuns: 1 }), async (rt) => {
      const hold = holder(rt)
      await hold.started
      const waiting = rt.run(request('return "waited"'))
      const { result, elapsedMs } = await timed(rt.run(request('return "refused"')))
      expect(result.error?.kind).toBe('limit')
      expect(result.error?.message).toMatch(/queue is full/)
      expect(elapsedMs).toBeLessThan(BOUND_MS)
      hold.release()
      expect((await hold.result).value).toBe('released')
      expect((await waiting).value).toBe('waited')
    })
  }, 30_000)

  test('a run whose program would take the queue past maxQueuedProgramBytes ends as limit at once; the waiting run goes on', async () => {
    await using(createQuickJSRuntime({ poolSize: 1, maxQueuedProgramBytes: 1000 }), async (rt) => {
      const hold = holder(rt)
      await hold.started
      const waiting = rt.run(request(`return "${'w'.repeat(900)}".length`))
      const refused = await rt.run(request(`return "${'r'.repeat(100)}".length`))
      expect(refused.error?.kind).toBe('limit')
      expect(refused.error?.message).toMatch(
        /queue is full \(1 runs running, 1 waiting with 916 bytes of programs; it holds at most 256 runs and 1000 bytes\)/,
      )
      hold.release()
      await hold.result
      expect((await waiting).value).toBe(900)
    })
  }, 30_000)

  test('maxQueuedRuns 0: a run that finds every place taken ends as limit', async () => {
    await using(createQuickJSRuntime({ isolation: 'inline', maxConcurrentRuns: 1, maxQueuedRuns: 0 }), async (rt) => {
      const hold = holder(rt)
      await hold.started
      expect((await rt.run(request('return 1'))).error?.kind).toBe('limit')
      hold.release()
      await hold.result
      expect((await rt.run(request('return 1'))).value).toBe(1)
    })
  }, 30_000)

  test('bad poolSize, maxConcurrentRuns, maxQueuedRuns or watchdogGraceMs are refused with SandboxUsageError when the runtime is made', () => {
    const cases: [QuickJSRuntimeOptions, string][] = [
      [{ maxConcurrentRuns: 0 }, 'maxConcurrentRuns must be a positive integer'],
      [{ poolSize: Number.NaN }, 'poolSize must be a positive integer'],
      [{ poolSize: 0 }, 'poolSize must be a positive integer'],
      [{ poolSize: 1.5 }, 'poolSize must be a positive integer'],
      [{ isolation: 'inline', maxQueuedRuns: -1 }, 'maxQueuedRuns must be a non-negative integer'],
      [{ isolation: 'inline', maxQueuedProgramBytes: 0 }, 'maxQueuedProgramBytes must be a positive integer'],
      [{ isolation: 'inline', watchdogGraceMs: -1 }, 'watchdogGraceMs must be a non-negative number'],
      [
        { isolation: 'inline', watchdogGraceMs: Number.POSITIVE_INFINITY },
        'watchdogGraceMs must be a non-negative number',
      ],
      // A longer grace would fire at once: a stopped engine terminated without any grace.
      [
        { isolation: 'inline', watchdogGraceMs: 2 ** 31 },
        "watchdogGraceMs must be at most 2147483647 ms (a timer's longest delay), not 2147483648",
      ],
    ]
    for (const [options, message] of cases) {
      let thrown: unknown
      try {
        createQuickJSRuntime(options)
      } catch (error) {
        thrown = error
      }
      expect(thrown instanceof SandboxUsageError).toBe(true)
      expect(thrown).toMatchObject({ name: 'SandboxUsageError', code: 'SANDBOX_MISUSE', message })
    }
  })
})

describe.each(['worker', 'inline'] as const)('queued runs end on abort and dispose (%s)', (isolation) => {
  const make = (): CodeRuntime => createQuickJSRuntime({ isolation, poolSize: 1, maxConcurrentRuns: 1 })

  test('aborting a queued run ends it as abort at once, and the run ahead of it is unaffected', async () => {
    await using(make(), async (rt) => {
      const hold = holder(rt)
      await hold.started
      const controller = new AbortController()
      setTimeout(() => controller.abort(), 100)
      const { result, elapsedMs } = await timed(
        rt.run(request('return 1', { signal: controller.signal, limits: { wallMs: 20_000 } })),
      )
      expect(result.error?.kind).toBe('abort')
      expect(result.stats.queueMs).toBeGreaterThan(0)
      expect(elapsedMs).toBeLessThan(100 + BOUND_MS)
      hold.release()
      expect((await hold.result).value).toBe('released')
    })
  }, 30_000)

  test('dispose settles the running run and every queued one as abort; later runs reject', async () => {
    const rt = make()
    const hold = holder(rt)
    await hold.started
    const queued = [1, 2, 3].map((i) => rt.run(request(`return ${i}`, { limits: { wallMs: 20_000 } })))
    await sleep(20)
    const t0 = performance.now()
    await rt.dispose()
    const all = await Promise.all([hold.result, ...queued])
    expect(performance.now() - t0).toBeLessThan(BOUND_MS)
    expect(all.map((r) => r.error?.kind)).toEqual(['abort', 'abort', 'abort', 'abort'])
    await expect(rt.run(request('return 1'))).rejects.toBeInstanceOf(SandboxUsageError)
  }, 30_000)
})
