import { describe, expect, test } from 'vitest'
import { DEFAULT_LIMITS } from './limits.js'
import { RunGate, type GatePlace } from './gate.js'
import { acceptRun } from './request.js'
import { SandboxUsageError } from './errors.js'
import type { CodeRunRequest } from './types.js'

const far = (): number => performance.now() + 60_000

/** Enters `gate` for `tenant`, and records `label` in `order` when the place is given. */
function enter(gate: RunGate, order: string[], label: string, tenant?: string): Promise<GatePlace> {
  return gate.enter(far(), undefined, 0, tenant).then((p) => {
    if (!p.ok) throw new Error(`${label} was refused: ${p.reason}`)
    order.push(label)
    return p
  })
}

describe('RunGate tenants', () => {
  test('a freed place goes to the tenants in turn, FIFO within each: a backlog delays others one run', async () => {
    const gate = new RunGate(1, 100)
    const order: string[] = []
    const places = new Map<string, Promise<GatePlace>>()
    places.set('held', enter(gate, order, 'held', 'a'))
    for (let i = 0; i < 5; i++) places.set(`a${i}`, enter(gate, order, `a${i}`, 'a'))
    places.set('b0', enter(gate, order, 'b0', 'b'))
    places.set('c0', enter(gate, order, 'c0', 'c'))
    places.set('b1', enter(gate, order, 'b1', 'b'))
    expect(gate.queued).toBe(8)
    // Each run, once it has its place, gives it back: the order in which the places were given is the turn.
    for (let given = 1; given <= places.size; given++) {
      await new Promise((resolve) => setImmediate(resolve))
      expect(order).toHaveLength(given)
      ;(await places.get(order[given - 1] as string))?.release()
    }
    expect(order).toEqual(['held', 'a0', 'b0', 'c0', 'a1', 'b1', 'a2', 'a3', 'a4'])
    expect(gate.active).toBe(0)
  })

  test('a freed place goes first to a waiting tenant holding no place, before one whose runs hold places', async () => {
    const gate = new RunGate(2, 100)
    const order: string[] = []
    const burning = await enter(gate, order, 'b-held', 'b')
    const other = await enter(gate, order, 'x-held', 'x')
    // Tenant b queued first, so the turn is its; but one of its runs already holds a place, and c holds none.
    const b1 = enter(gate, order, 'b1', 'b')
    const c1 = enter(gate, order, 'c1', 'c')
    other.release()
    await new Promise((resolve) => setImmediate(resolve))
    expect(order).toEqual(['b-held', 'x-held', 'c1'])
    // Among tenants holding as many places, the turn decides: b's now.
    ;(await c1).release()
    ;(await b1).release()
    burning.release()
    expect(order).toEqual(['b-held', 'x-held', 'c1', 'b1'])
    expect(gate.active).toBe(0)
  })

  test('runs without a tenant share one queue, in FIFO order as before', async () => {
    const gate = new RunGate(1, 10)
    const order: string[] = []
    const held = await enter(gate, order, 'held')
    const waiting = ['x', 'y', 'z'].map((label) => enter(gate, order, label))
    held.release()
    for (const p of waiting) (await p).release()
    expect(order).toEqual(['held', 'x', 'y', 'z'])
  })

  test('lent places admit waiting runs at once; taking them back ends no run, and the next run waits', async () => {
    const gate = new RunGate(1, 10)
    const order: string[] = []
    const held = await enter(gate, order, 'held')
    const a = enter(gate, order, 'a', 'one')
    const b = enter(gate, order, 'b', 'two')
    gate.lend(2)
    const [pa, pb] = await Promise.all([a, b])
    expect(gate.active).toBe(3)
    expect(gate.lent).toBe(2)
    gate.lend(0)
    const c = enter(gate, order, 'c', 'one')
    held.release()
    pa.release()
    await new Promise((resolve) => setImmediate(resolve))
    // Three places were held against a capacity of one: c waits until fewer than one are.
    expect(order).toEqual(['held', 'a', 'b'])
    pb.release()
    ;(await c).release()
    expect(order).toEqual(['held', 'a', 'b', 'c'])
    expect(gate.active).toBe(0)
  })

  test('the queue bounds count every tenant; a waiter leaves its own queue on abort and at its deadline', async () => {
    const gate = new RunGate(1, 2)
    const held = await enter(gate, [], 'held')
    const controller = new AbortController()
    const aborted = gate.enter(far(), controller.signal, 0, 'a')
    const late = gate.enter(performance.now() + 20, undefined, 0, 'b')
    expect(await gate.enter(far(), undefined, 0, 'c')).toEqual({ ok: false, reason: 'queue-full' })
    controller.abort()
    expect(await aborted).toEqual({ ok: false, reason: 'abort' })
    expect(await late).toEqual({ ok: false, reason: 'wall' })
    expect(gate.queued).toBe(0)
    const waiting = gate.enter(far(), undefined, 0, 'a')
    gate.close()
    expect(await waiting).toEqual({ ok: false, reason: 'closed' })
    held.release()
    expect(gate.active).toBe(0)
  })
})

describe('acceptRun tenants', () => {
  const request = (tenant: unknown): CodeRunRequest =>
    ({
      code: 'return 1',
      language: 'javascript',
      bindings: [],
      call: async () => null,
      tenant,
    }) as unknown as CodeRunRequest

  test('a run waits in the queue of its tenant', async () => {
    const gate = new RunGate(1, 10)
    const first = await acceptRun(request('a'), DEFAULT_LIMITS, gate)
    const order: string[] = []
    const runs = new Map(
      (['a1', 'a2', 'b1'] as const).map((label) => [
        label,
        acceptRun(request(label[0]), DEFAULT_LIMITS, gate).then((r) => (order.push(label), r)),
      ]),
    )
    if (first.ok) first.release()
    for (let given = 1; given <= runs.size; given++) {
      await new Promise((resolve) => setImmediate(resolve))
      const admitted = await runs.get(order[given - 1] as 'a1')
      if (admitted?.ok) admitted.release()
    }
    expect(order).toEqual(['a1', 'b1', 'a2'])
    expect(gate.active).toBe(0)
  })

  test('a tenant that is not a string is misuse', async () => {
    await expect(acceptRun(request(7), DEFAULT_LIMITS)).rejects.toBeInstanceOf(SandboxUsageError)
  })
})
