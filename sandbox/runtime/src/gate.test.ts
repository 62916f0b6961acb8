import { describe, expect, test } from 'vitest'
import { SandboxUsageError } from './errors.js'
import { RunGate } from './gate.js'

const far = (): number => performance.now() + 60_000

describe('RunGate', () => {
  test('admits up to maxConcurrent at once and the rest in FIFO order as places free', async () => {
    const gate = new RunGate(2, 10)
    const a = await gate.enter(far())
    const b = await gate.enter(far())
    expect(a.ok && b.ok).toBe(true)
    const order: string[] = []
    const c = gate.enter(far()).then((p) => (order.push('c'), p))
    const d = gate.enter(far()).then((p) => (order.push('d'), p))
    expect(gate.active).toBe(2)
    expect(gate.queued).toBe(2)
    if (a.ok) a.release()
    if (a.ok) a.release() // a second release is ignored
    const pc = await c
    expect(order).toEqual(['c'])
    expect(gate.active).toBe(2)
    if (b.ok) b.release()
    await d
    expect(order).toEqual(['c', 'd'])
    if (pc.ok) pc.release()
    expect(gate.active).toBe(1)
  })

  test('a waiter leaves at its deadline, on abort, when the queue is full and when the gate closes', async () => {
    const gate = new RunGate(1, 2)
    const held = await gate.enter(far())
    expect(held.ok).toBe(true)
    const late = gate.enter(performance.now() + 20)
    const controller = new AbortController()
    const aborted = gate.enter(far(), controller.signal)
    expect(await gate.enter(far())).toEqual({ ok: false, reason: 'queue-full' })
    controller.abort()
    expect(await aborted).toEqual({ ok: false, reason: 'abort' })
    expect(await late).toEqual({ ok: false, reason: 'wall' })
    expect(gate.queued).toBe(0)
    const waiting = gate.enter(far())
    gate.close()
    expect(await waiting).toEqual({ ok: false, reason: 'closed' })
    expect(await gate.enter(far())).toEqual({ ok: false, reason: 'closed' })
    // A place already held stays valid and releases cleanly.
    if (held.ok) held.release()
    expect(gate.active).toBe(0)
  })

  test('an aborted signal is refused at once, and a free gate with an empty queue admits at once', async () => {
    const gate = new RunGate(1, 0)
    expect(await gate.enter(far(), AbortSignal.abort())).toEqual({ ok: false, reason: 'abort' })
    const p = await gate.enter(far())
    expect(p.ok).toBe(true)
    expect(await gate.enter(far())).toEqual({ ok: false, reason: 'queue-full' })
  })

  test('the programs waiting take at most maxQueuedBytes in all; a run finding the queue empty waits whatever its size', async () => {
    const gate = new RunGate(1, 100, 1000)
    const held = await gate.enter(far(), undefined, 5000)
    expect(held.ok).toBe(true)
    const big = gate.enter(far(), undefined, 5000)
    expect([gate.queued, gate.queuedBytes]).toEqual([1, 5000])
    expect(await gate.enter(far(), undefined, 1)).toEqual({ ok: false, reason: 'queue-full' })
    if (held.ok) held.release()
    const second = await big
    expect([gate.queued, gate.queuedBytes]).toEqual([0, 0])
    const a = gate.enter(far(), undefined, 600)
    const controller = new AbortController()
    const b = gate.enter(far(), controller.signal, 400)
    expect(await gate.enter(far(), undefined, 1)).toEqual({ ok: false, reason: 'queue-full' })
    // A waiter that leaves gives its bytes back.
    controller.abort()
    expect(await b).toEqual({ ok: false, reason: 'abort' })
    expect(gate.queuedBytes).toBe(600)
    const c = gate.enter(far(), undefined, 400)
    expect(gate.queuedBytes).toBe(1000)
    if (second.ok) second.release()
    const pa = await a
    if (pa.ok) pa.release()
    const pc = await c
    expect(pc.ok).toBe(true)
    expect([gate.queued, gate.queuedBytes]).toEqual([0, 0])
  })

  test('bad sizes are host misuse: SandboxUsageError with code SANDBOX_MISUSE', () => {
    const cases: [number, number, number | undefined, string][] = [
      [0, 1, undefined, 'maxConcurrentRuns must be a positive integer'],
      [1.5, 1, undefined, 'maxConcurrentRuns must be a positive integer'],
      [1, -1, undefined, 'maxQueuedRuns must be a non-negative integer'],
      [1, Number.NaN, undefined, 'maxQueuedRuns must be a non-negative integer'],
      [1, 1, 0, 'maxQueuedProgramBytes must be a positive integer'],
      [1, 1, 2.5, 'maxQueuedProgramBytes must be a positive integer'],
    ]
    for (const [concurrent, queued, bytes, message] of cases) {
      let thrown: unknown
      try {
        new RunGate(concurrent, queued, bytes)
      } catch (error) {
        thrown = error
      }
      expect(thrown instanceof SandboxUsageError).toBe(true)
      expect(thrown).toMatchObject({ name: 'SandboxUsageError', code: 'SANDBOX_MISUSE', message })
    }
  })
})
