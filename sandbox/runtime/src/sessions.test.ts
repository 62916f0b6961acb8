import { describe, expect, test } from 'vitest'
import { SessionStoreError } from './session/errors.js'
import { SessionTable, resolveSessionLimits, type SessionSpill, type SessionTurn } from './sessions.js'

/** A state the table holds: its name, and whether the table let go of it (`drop`). */
interface State {
  readonly name: string
  dropped: boolean
}

/**
 * The store side of the seam: every save waits until the test settles it (or fails it), so the test decides
 * how far behind the store is. `held` is what the table holds and has not dropped.
 */
function slowSpill(options: { suspendAfterMs?: number; storeWaitMs?: number } = {}) {
  const pending: { key: string; settle: () => void; fail: (error: Error) => void }[] = []
  const saved = new Map<string, State>()
  const spill: SessionSpill<State> = {
    suspendAfterMs: options.suspendAfterMs ?? 60_000,
    storeWaitMs: options.storeWaitMs ?? 60_000,
    save: (key, state) =>
      new Promise<void>((resolve, reject) => {
        pending.push({
          key,
          settle: () => {
            saved.set(key, state)
            resolve()
          },
          fail: reject,
        })
      }),
    load: async (key) => {
      const state = saved.get(key)
      return state === undefined ? undefined : { state, bytes: 1, runs: 1 }
    },
    remove: async (key) => saved.delete(key),
  }
  return { spill, pending, saved }
}

function tableOf(maxSessions: number, spill: SessionSpill<State>): SessionTable<State> {
  return new SessionTable<State>(resolveSessionLimits({ maxSessions }), (state) => (state.dropped = true), spill)
}

/** Takes `key`, leaves a state named after it, gives it back. */
async function runIn(table: SessionTable<State>, key: string, wait = { deadline: performance.now() + 60_000 }): Promise<SessionTurn<State>> {
  const turn = await table.take(key, Date.now(), wait)
  if (turn.ok) table.give(turn.entry, { state: { name: key, dropped: false }, bytes: 1 }, turn.fresh)
  return turn
}

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

describe('SessionTable with a spill that is behind', () => {
  test('at most maxSessions saves are in progress: a new session waits for one, then starts', async () => {
    const { spill, pending } = slowSpill()
    const table = tableOf(2, spill)
    for (const key of ['a', 'b', 'c', 'd']) expect((await runIn(table, key)).ok).toBe(true)
    // c and d are live; a and b are being saved.
    expect(pending.map((p) => p.key)).toEqual(['a', 'b'])
    let started = false
    const e = runIn(table, 'e').then((turn) => ((started = true), turn))
    await tick()
    expect(started).toBe(false)
    expect(pending).toHaveLength(2)
    pending.shift()?.settle()
    const turn = await e
    expect(turn.ok && turn.fresh).toBe(true)
    // Room was made by saving c, the least recently used.
    expect(pending.map((p) => p.key)).toEqual(['b', 'c'])
  })

  test('a new session that finds no room before its deadline is refused as such, and nothing was let go of', async () => {
    const { spill, pending } = slowSpill()
    const table = tableOf(1, spill)
    await runIn(table, 'a')
    await runIn(table, 'b')
    expect(pending.map((p) => p.key)).toEqual(['a'])
    const turn = await table.take('c', Date.now(), { deadline: performance.now() + 30 })
    expect(turn).toEqual({
      ok: false,
      reason: 'wall',
      message: expect.stringMatching(/^the session store was still saving 1 session \(at most maxSessions = 1 saves wait at once\) after \d+ ms: session "c" could not start$/),
    })
    const aborted = new AbortController()
    const waiting = table.take('c', Date.now(), { deadline: performance.now() + 60_000, signal: aborted.signal })
    aborted.abort()
    expect(await waiting).toMatchObject({ ok: false, reason: 'abort' })
    // b is still live, its state in place: its next run finds it.
    expect(pending).toHaveLength(1)
    const b = await table.take('b', Date.now(), { deadline: performance.now() + 60_000 })
    expect(b.ok && b.entry.state?.name).toBe('b')
  })

  test('idle sessions stay live while the saves are at the cap, and leave once the store caught up', async () => {
    const { spill, pending } = slowSpill({ suspendAfterMs: 1_000 })
    const table = tableOf(2, spill)
    await runIn(table, 'a')
    await runIn(table, 'b')
    await runIn(table, 'c')
    await runIn(table, 'd')
    expect(pending.map((p) => p.key)).toEqual(['a', 'b'])
    table.sweep(Date.now() + 5_000)
    expect(table.size).toBe(2)
    expect(pending).toHaveLength(2)
    pending.shift()?.settle()
    await tick()
    table.sweep(Date.now() + 5_000)
    // One save ended: one more idle session left memory.
    expect(table.size).toBe(1)
    expect(pending.map((p) => p.key)).toEqual(['b', 'c'])
  })

  test('resuming into a full table waits for a save, then fails as unavailable, changing nothing', async () => {
    const { spill, pending } = slowSpill({ storeWaitMs: 30 })
    const table = tableOf(1, spill)
    await runIn(table, 'a')
    await runIn(table, 'b')
    const resumed: State = { name: 'r', dropped: false }
    const error: unknown = await table.attach('r', resumed, 1, 3).catch((thrown: unknown) => thrown)
    expect(error).toBeInstanceOf(SessionStoreError)
    expect(error).toMatchObject({ code: 'unavailable', message: expect.stringMatching(/still saving 1 session .* after 30 ms: session "r" was not resumed$/) })
    expect(table.size).toBe(1)
    const b = await table.take('b', Date.now(), { deadline: performance.now() + 60_000 })
    expect(b.ok && b.entry.state?.name).toBe('b')
    if (b.ok) table.give(b.entry, { reason: 'kept' }, false)
    // Once the store took a, there is room: b is saved and r is live.
    pending.shift()?.settle()
    await table.attach('r', resumed, 1, 3)
    expect(pending.map((p) => p.key)).toEqual(['b'])
    const r = await table.take('r', Date.now(), { deadline: performance.now() + 60_000 })
    expect(r.ok && r.entry.state).toBe(resumed)
  })

  test("a store's failure is quoted in the session's note up to 300 characters", async () => {
    const { spill, pending } = slowSpill()
    const table = tableOf(1, spill)
    await runIn(table, 'a')
    await runIn(table, 'b')
    pending.shift()?.fail(new Error(`refused: ${'x'.repeat(10_000)}`))
    await tick()
    const turn = await table.take('a', Date.now(), { deadline: performance.now() + 60_000 })
    const note = turn.ok ? (turn.note ?? '') : ''
    expect(note).toContain(`and saving it failed: refused: ${'x'.repeat(300 - 'refused: '.length)}… (10009 characters)`)
    expect(note.length).toBeLessThan(600)
  })

  test("a save that fails tells that session's next run; the reasons kept are bounded", async () => {
    const { spill, pending } = slowSpill()
    const table = tableOf(1, spill)
    for (let i = 0; i < 12; i++) {
      await runIn(table, `k${i}`)
      for (const save of pending.splice(0)) save.fail(new Error(`disk full (${save.key})`))
      await tick()
    }
    // k11 is live; k0..k10 were let go of and their saves failed. Only the most recent 4 x maxSessions reasons are kept.
    const recent = await table.take('k10', Date.now(), { deadline: performance.now() + 60_000 })
    expect(recent).toMatchObject({ ok: true, fresh: true, note: expect.stringContaining('and saving it failed: disk full (k10)') })
    if (recent.ok) table.give(recent.entry, { reason: 'no state' }, true)
    for (const save of pending.splice(0)) save.settle()
    await tick()
    const old = await table.take('k3', Date.now(), { deadline: performance.now() + 60_000 })
    expect(old.ok).toBe(true)
    expect(old.ok && old.note).toBeUndefined()
  })
})
