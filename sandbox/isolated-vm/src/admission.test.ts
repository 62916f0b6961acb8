import type { CodeRunResult, JsonValue } from '@ptc/sandbox'
import { describe, expect, test } from 'vitest'
import { createIsolatedVmRuntime, isolatedVmAvailability, type IsolatedVmRuntime } from './index.js'
import { sleep } from './test-helpers.js'

const availability = isolatedVmAvailability()

/** A host whose `enter`/`leave` tools count the runs between the two calls. */
function counter() {
  let active = 0
  let peak = 0
  return {
    get peak() {
      return peak
    },
    call: async (name: string): Promise<JsonValue> => {
      if (name === 'enter') peak = Math.max(peak, ++active)
      else active--
      await sleep(5)
      return null
    },
  }
}
const COUNTED = 'await tools.enter({})\nawait tools.leave({})\nreturn 1'

/** A run that holds its place until `release()`: it waits on a tool the test answers. */
async function heldRun(rt: IsolatedVmRuntime): Promise<{ first: Promise<CodeRunResult>; release(): void }> {
  let release!: () => void
  const held = new Promise<void>((resolve) => (release = resolve))
  const first = rt.run({
    code: 'await tools.hold({})\nreturn 1',
    bindings: ['hold'],
    call: async () => (await held, null),
  })
  await sleep(50)
  return { first, release }
}

describe.skipIf(!availability.available)('isolated-vm run admission (maxConcurrentRuns, maxQueuedRuns)', () => {
  test('200 runs at once execute at most maxConcurrentRuns at a time and all succeed', async () => {
    const rt = createIsolatedVmRuntime({ maxConcurrentRuns: 4, maxQueuedRuns: 300 })
    try {
      const host = counter()
      const results = await Promise.all(
        Array.from({ length: 200 }, () => rt.run({ code: COUNTED, bindings: ['enter', 'leave'], call: host.call })),
      )
      expect(results.every((r) => r.value === 1)).toBe(true)
      expect(host.peak).toBeLessThanOrEqual(4)
      expect(host.peak).toBeGreaterThan(1)
      // Later runs waited for a place, and say so.
      expect(Math.max(...results.map((r) => r.stats.queueMs))).toBeGreaterThan(0)
      for (const r of results) expect(r.stats.wallMs).toBeGreaterThanOrEqual(r.stats.queueMs)
    } finally {
      await rt.dispose()
    }
  }, 60_000)

  test('by default at most processes x runsPerProcess runs execute at once', async () => {
    const rt = createIsolatedVmRuntime({ processes: 1, runsPerProcess: 3 })
    try {
      const host = counter()
      await Promise.all(
        Array.from({ length: 20 }, () => rt.run({ code: COUNTED, bindings: ['enter', 'leave'], call: host.call })),
      )
      expect(host.peak).toBeLessThanOrEqual(3)
    } finally {
      await rt.dispose()
    }
  }, 60_000)

  test('a run past the queue ends at once as limit; a queued run leaves at its wall deadline', async () => {
    const rt = createIsolatedVmRuntime({ maxConcurrentRuns: 1, maxQueuedRuns: 1 })
    try {
      const { first, release } = await heldRun(rt)
      const queued = rt.run({ code: 'return 2', bindings: [], call: async () => null, limits: { wallMs: 300 } })
      const refused = await rt.run({ code: 'return 3', bindings: [], call: async () => null })
      expect(refused.error?.kind).toBe('limit')
      expect(refused.error?.message).toMatch(/queue is full/)
      const q = await queued
      expect(q.error?.kind).toBe('timeout')
      expect(q.error?.message).toMatch(/before the program started/)
      expect(q.stats.wallMs).toBeLessThan(1500)
      release()
      expect((await first).value).toBe(1)
      expect((await rt.run({ code: 'return 4', bindings: [], call: async () => null })).value).toBe(4)
    } finally {
      await rt.dispose()
    }
  }, 30_000)

  test('a run whose program would take the queue past maxQueuedProgramBytes ends at once as limit', async () => {
    const rt = createIsolatedVmRuntime({ maxConcurrentRuns: 1, maxQueuedProgramBytes: 1000 })
    try {
      const { first, release } = await heldRun(rt)
      const queued = rt.run({ code: `return "${'w'.repeat(900)}".length`, bindings: [], call: async () => null })
      const refused = await rt.run({ code: `return "${'r'.repeat(100)}".length`, bindings: [], call: async () => null })
      expect(refused.error?.kind).toBe('limit')
      expect(refused.error?.message).toMatch(/queue is full \(1 runs running, 1 waiting with 916 bytes of programs/)
      release()
      expect((await first).value).toBe(1)
      expect((await queued).value).toBe(900)
    } finally {
      await rt.dispose()
    }
  }, 30_000)

  test('the wall clock and queueMs count from the run() call', async () => {
    const rt = createIsolatedVmRuntime({ maxConcurrentRuns: 1 })
    try {
      // Warm: the engine processes have booted (a fresh runtime's first run waits for them).
      expect((await rt.run({ code: 'return 0', bindings: [], call: async () => null })).value).toBe(0)
      const first = rt.run({
        code: 'await tools.wait({})',
        bindings: ['wait'],
        call: async () => (await sleep(400), null),
      })
      await sleep(20)
      // Its wall leaves it a second to run after the queue (on a loaded machine 400 ms gave it no CPU at all).
      const second = await rt.run({
        code: 'while (true) {}',
        bindings: [],
        call: async () => null,
        limits: { wallMs: 1400, cpuMs: 60_000 },
      })
      await first
      expect(second.error?.kind).toBe('timeout')
      expect(second.error?.message).not.toMatch(/before the program started/)
      expect(second.stats.queueMs).toBeGreaterThan(250)
      expect(second.stats.wallMs).toBeGreaterThanOrEqual(1390)
      expect(second.stats.wallMs).toBeLessThan(2900)
      // The engine reports the guest's CPU while it runs: a run the host stopped still has it.
      expect(second.stats.cpuMs).toBeGreaterThan(0)
    } finally {
      await rt.dispose()
    }
  }, 30_000)

  test('the admission options are checked', () => {
    expect(() => createIsolatedVmRuntime({ maxConcurrentRuns: 0 })).toThrow(/maxConcurrentRuns/)
    expect(() => createIsolatedVmRuntime({ maxQueuedRuns: -1 })).toThrow(/maxQueuedRuns/)
    expect(() => createIsolatedVmRuntime({ maxQueuedProgramBytes: 0 })).toThrow(/maxQueuedProgramBytes/)
    expect(() => createIsolatedVmRuntime({ runsPerProcess: 1.5 })).toThrow(/runsPerProcess/)
    expect(() => createIsolatedVmRuntime({ containment: 'thread' as 'none' })).toThrow(/containment/)
  })
})
