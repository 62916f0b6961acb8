/** `SessionTable` over a spill: saves that fall behind or fail, and loads the store cannot answer. */
import { describe, expect, test } from 'vitest'
import type { SessionTurn } from './entry.js'
import { SessionStoreError } from './errors.js'
import { later, runIn, slowSpill, type State, tableOf, tick } from './fixtures/tables.js'

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

  test('an idle session whose save fails stays live when nothing took its place, and a later sweep saves it', async () => {
    const { spill, pending, saved } = slowSpill({ suspendAfterMs: 1_000 })
    const table = tableOf(4, spill)
    await runIn(table, 'a')
    const state = (await table.take('a', Date.now(), { deadline: performance.now() + 60_000 })) as SessionTurn<State> & { ok: true }
    table.give(state.entry, { state: { name: 'a2', dropped: false }, bytes: 1 }, false)
    const held = state.entry.state as State
    table.sweep(Date.now() + 2_000)
    expect([pending.map((p) => p.key), table.size]).toEqual([['a'], 0])
    // The store is down: the state stays in memory (it was dropped, and the next run started from nothing).
    pending.shift()?.fail(new Error('store down'))
    await tick()
    expect([table.size, held.dropped]).toEqual([1, false])
    table.sweep(Date.now() + 2_000)
    expect(pending.map((p) => p.key)).toEqual(['a'])
    pending.shift()?.settle()
    await tick()
    expect([table.size, held.dropped, saved.get('a')?.name]).toEqual([0, true, 'a2'])
    const next = await table.take('a', Date.now(), { deadline: performance.now() + 60_000 })
    expect([next.ok && next.entry.state?.name, next.ok && next.note]).toEqual(['a2', undefined])
  })

  test('a failed idle save gives nothing back after endSession or close came meanwhile, and its state back after a suspendSession that found it not live; the next try waits suspendAfterMs', async () => {
    for (const cut of ['end', 'detach', 'close'] as const) {
      const { spill, pending } = slowSpill({ suspendAfterMs: 1_000 })
      const table = tableOf(4, spill)
      await runIn(table, 'a')
      table.sweep(Date.now() + 2_000)
      const cutting = cut === 'end' ? table.end('a') : cut === 'close' ? table.close() : Promise.resolve(table.detach('a'))
      pending.shift()?.fail(new Error('store down'))
      await cutting
      await tick()
      expect([cut, table.size]).toEqual([cut, cut === 'detach' ? 1 : 0])
      if (cut === 'close') continue
      const next = await table.take('a', Date.now(), { deadline: performance.now() + 60_000 })
      // The suspend took nothing out (the session was not live, its save in progress): the session is not lost.
      expect([cut, next.ok && next.entry.state?.name]).toEqual([cut, cut === 'detach' ? 'a' : undefined])
    }
    // Kept after a failure: the sweeps try again once suspendAfterMs has passed since, not at every sweep.
    const { spill, pending } = slowSpill({ suspendAfterMs: 1_000 })
    const table = tableOf(4, spill)
    const turn = await table.take('a', Date.now(), { deadline: performance.now() + 60_000 })
    if (turn.ok) {
      table.give(turn.entry, { state: { name: 'a', dropped: false }, bytes: 1 }, true)
      turn.entry.lastUsed = Date.now() - 5_000 // last used 5 s ago
    }
    table.sweep()
    expect(pending.map((p) => p.key)).toEqual(['a'])
    pending.shift()?.fail(new Error('store down'))
    await tick()
    table.sweep(Date.now() + 500)
    expect([table.size, pending.length]).toEqual([1, 0])
    table.sweep(Date.now() + 1_500)
    expect(pending.map((p) => p.key)).toEqual(['a'])
    // Still failing at its idle TTL: the note says so.
    pending.shift()?.fail(new Error('store still down'))
    await tick()
    table.sweep(Date.now() + 31 * 60_000)
    const expired = await table.take('a', Date.now(), { deadline: performance.now() + 60_000 })
    expect(expired.ok && expired.note).toMatch(/it was idle for 1800000 ms \(idleTtlMs\), and saving it to the session store kept failing: store still down$/)
  })

  test("a run that starts while the idle save is in progress gets the state when the save fails, not the store's older one", async () => {
    const { spill, pending, saved } = slowSpill({ suspendAfterMs: 1_000 })
    saved.set('a', { name: 'older', dropped: false })
    const table = tableOf(4, spill)
    await runIn(table, 'a')
    table.sweep(Date.now() + 2_000)
    const taking = table.take('a', Date.now(), { deadline: performance.now() + 60_000 })
    pending.shift()?.fail(new Error('store down'))
    const turn = await taking
    expect([turn.ok && turn.entry.state?.name, turn.ok && turn.fresh, turn.ok && turn.note]).toEqual(['a', false, undefined])
  })

  test('a session this process saved that the store no longer has (evicted, flushed, expired there) starts fresh with a note saying so', async () => {
    const { spill, pending, saved } = slowSpill({ suspendAfterMs: 1_000 })
    const table = tableOf(4, spill)
    await runIn(table, 'a')
    table.sweep(Date.now() + 2_000)
    pending.shift()?.settle()
    await tick()
    saved.delete('a')
    const turn = await table.take('a', Date.now(), { deadline: performance.now() + 60_000 })
    expect([turn.ok && turn.fresh, turn.ok && turn.note]).toEqual([true, expect.stringMatching(/^the session's state, which this process saved to the session store \d+ s ago, was not there any more \(expired or removed there\): it starts fresh$/)])
    // Told once: the session's next run after that is an ordinary one.
    if (turn.ok) table.give(turn.entry, { state: { name: 'again', dropped: false }, bytes: 1 }, true)
    const next = await table.take('a', Date.now(), { deadline: performance.now() + 60_000 })
    expect(next.ok && next.note).toBeUndefined()
  })

  test('a session the cap pushed out whose save failed goes on from the older state the store had, and is told', async () => {
    const { spill, pending, saved } = slowSpill()
    saved.set('a', { name: 'older', dropped: false })
    const table = tableOf(1, spill)
    await runIn(table, 'a')
    await runIn(table, 'b')
    pending.shift()?.fail(new Error('disk full'))
    await tick()
    const turn = await table.take('a', Date.now(), { deadline: performance.now() + 60_000 })
    expect([turn.ok && turn.entry.state?.name, turn.ok && turn.note]).toEqual([
      'older',
      expect.stringMatching(/^the session's latest state was dropped \(it was the least recently used .*, and saving it failed: disk full\); it goes on from the state the session store had$/),
    ])
  })

  test("a store's failure is quoted in the session's note up to 400 characters, its head and its tail", async () => {
    const { spill, pending } = slowSpill()
    const table = tableOf(1, spill)
    await runIn(table, 'a')
    await runIn(table, 'b')
    const tail = ' It was moved aside to /var/ptc/sessions/0a1b.session.unreadable-1765000000000: inspect it, then delete it'
    pending.shift()?.fail(new Error(`refused: ${'x'.repeat(10_000)}.${tail}`))
    await tick()
    const turn = await table.take('a', Date.now(), { deadline: performance.now() + 60_000 })
    const note = turn.ok ? (turn.note ?? '') : ''
    const length = 'refused: '.length + 10_000 + 1 + tail.length
    expect(note).toContain(`and saving it failed: refused: ${'x'.repeat(150 - 'refused: '.length)}… (${length} characters) …${'x'.repeat(250 - 1 - tail.length)}.${tail}`)
    expect(note.length).toBeLessThan(700)
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

test("a store that cannot be read refuses the run (the saved state is not started over and later saved over); a saved state that cannot be resumed starts fresh", async () => {
  const { spill, saved, pending } = slowSpill()
  saved.set('k', { name: 'saved', dropped: false })
  let failure: Error | undefined = new SessionStoreError('unavailable', 'the session store failed to read session "k": ECONNRESET')
  const load = spill.load
  const table = tableOf(4, {
    ...spill,
    load: async (key) => {
      if (failure !== undefined) throw failure
      return load(key)
    },
  })
  expect(await table.take('k', Date.now(), later())).toEqual({
    ok: false,
    message: 'the session store failed to read session "k": ECONNRESET; the program did not run, and the session\'s saved state is as it was',
  })
  expect(table.size).toBe(0)
  failure = undefined
  const turn = await table.take('k', Date.now(), later())
  expect(turn.ok && turn.entry.state?.name).toBe('saved')
  if (turn.ok) table.give(turn.entry, { reason: 'no change' }, false)
  await table.end('k')
  saved.set('k', { name: 'saved', dropped: false })
  failure = new Error('its HMAC does not match')
  expect(await table.take('k', Date.now(), later())).toMatchObject({ ok: true, fresh: true, note: expect.stringContaining('could not be resumed (its HMAC does not match); it starts fresh') })
  expect(pending).toEqual([])
})
