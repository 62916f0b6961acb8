import { describe, expect, test } from 'vitest'
import { SessionStoreError } from './store/errors.js'
import type { SessionTurn } from './entry.js'
import { resolveSessionLimits } from './limits.js'
import type { SessionSpill } from './spill.js'
import { SessionTable } from './table.js'

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
async function runIn(
  table: SessionTable<State>,
  key: string,
  wait = { deadline: performance.now() + 60_000 },
): Promise<SessionTurn<State>> {
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
      message: expect.stringMatching(
        /^the session store was still saving 1 session \(at most maxSessions = 1 saves wait at once\) after \d+ ms: session "c" could not start$/,
      ),
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
    expect(error).toMatchObject({
      code: 'unavailable',
      message: expect.stringMatching(/still saving 1 session .* after 30 ms: session "r" was not resumed$/),
    })
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
    const state = (await table.take('a', Date.now(), {
      deadline: performance.now() + 60_000,
    })) as SessionTurn<State> & { ok: true }
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
      const cutting =
        cut === 'end' ? table.end('a') : cut === 'close' ? table.close() : Promise.resolve(table.detach('a'))
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
    expect(expired.ok && expired.note).toMatch(
      /it was idle for 1800000 ms \(idleTtlMs\), and saving it to the session store kept failing: store still down$/,
    )
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
    expect([turn.ok && turn.entry.state?.name, turn.ok && turn.fresh, turn.ok && turn.note]).toEqual([
      'a',
      false,
      undefined,
    ])
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
    expect([turn.ok && turn.fresh, turn.ok && turn.note]).toEqual([
      true,
      expect.stringMatching(
        /^the session's state, which this process saved to the session store \d+ s ago, was not there any more \(expired or removed there\): it starts fresh$/,
      ),
    ])
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
      expect.stringMatching(
        /^the session's latest state was dropped \(it was the least recently used .*, and saving it failed: disk full\); it goes on from the state the session store had$/,
      ),
    ])
  })

  test("a store's failure is quoted in the session's note up to 400 characters, its head and its tail", async () => {
    const { spill, pending } = slowSpill()
    const table = tableOf(1, spill)
    await runIn(table, 'a')
    await runIn(table, 'b')
    const tail =
      ' It was moved aside to /var/ptc/sessions/0a1b.session.unreadable-1765000000000: inspect it, then delete it'
    pending.shift()?.fail(new Error(`refused: ${'x'.repeat(10_000)}.${tail}`))
    await tick()
    const turn = await table.take('a', Date.now(), { deadline: performance.now() + 60_000 })
    const note = turn.ok ? (turn.note ?? '') : ''
    const length = 'refused: '.length + 10_000 + 1 + tail.length
    expect(note).toContain(
      `and saving it failed: refused: ${'x'.repeat(150 - 'refused: '.length)}… (${length} characters) …${'x'.repeat(250 - 1 - tail.length)}.${tail}`,
    )
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
    expect(recent).toMatchObject({
      ok: true,
      fresh: true,
      note: expect.stringContaining('and saving it failed: disk full (k10)'),
    })
    if (recent.ok) table.give(recent.entry, { reason: 'no state' }, true)
    for (const save of pending.splice(0)) save.settle()
    await tick()
    const old = await table.take('k3', Date.now(), { deadline: performance.now() + 60_000 })
    expect(old.ok).toBe(true)
    expect(old.ok && old.note).toBeUndefined()
  })
})

/**
 * Two processes' tables over one store with claims (the host side of the seam): `claims` is the store's
 * claim of each key (holder and expiry, epoch ms), `saved` its saved states. Saves are immediate.
 */
function sharedStore() {
  const claims = new Map<string, { holder: string; until: number }>()
  const saved = new Map<string, State>()
  const log: string[] = []
  const spillFor = (
    holder: string,
    options: { failClaims?: () => boolean; suspendAfterMs?: number; claimMs?: number } = {},
  ): SessionSpill<State> => ({
    suspendAfterMs: options.suspendAfterMs ?? 1_000,
    storeWaitMs: 1_000,
    ...(options.claimMs !== undefined && { claimMs: options.claimMs }),
    save: async (key, state) => {
      log.push(`${holder} save ${key}`)
      saved.set(key, { name: state.name, dropped: false })
    },
    load: async (key) => {
      log.push(`${holder} load ${key}`)
      const state = saved.get(key)
      return state === undefined ? undefined : { state: { ...state }, bytes: 1, runs: 1 }
    },
    remove: async (key) => saved.delete(key),
    claim: async (key, ttlMs) => {
      if (options.failClaims?.() === true) throw new Error('connection reset')
      const now = Date.now()
      const current = claims.get(key)
      if (current !== undefined && current.holder !== holder && current.until > now)
        return { holder: current.holder, expiresInMs: current.until - now }
      log.push(`${holder} claim ${key}`)
      claims.set(key, { holder, until: now + ttlMs })
      return undefined
    },
    release: async (key) => {
      if (claims.get(key)?.holder !== holder) return
      log.push(`${holder} release ${key}`)
      claims.delete(key)
    },
  })
  return { claims, saved, log, spillFor }
}

const later = () => ({ deadline: performance.now() + 60_000 })

describe('SessionTable with a store that has claims', () => {
  test('a session live in one table is refused in another, with why; once the first saves it (and releases its claim), the second resumes its state', async () => {
    const { claims, log, spillFor } = sharedStore()
    const one = tableOf(4, spillFor('one'))
    const two = tableOf(4, spillFor('two'))
    await runIn(one, 'k')
    expect(claims.get('k')?.holder).toBe('one')
    const refused = await two.take('k', Date.now(), later())
    expect(refused).toEqual({
      ok: false,
      message: expect.stringMatching(
        /^session "k" is held by another process sharing the session store \(its claim runs out in \d+ s unless renewed; a process lets a session go to the store once it has been idle for suspendAfterMs = 1000 ms\): this program did not run, and the session's state is unchanged/,
      ),
    })
    expect(two.size).toBe(0)
    // The refusal loaded nothing, and the first table's session is untouched.
    expect(log).toEqual(['one claim k', 'one load k'])
    const again = await one.take('k', Date.now(), later())
    expect(again.ok && again.entry.state?.name).toBe('k')
    if (again.ok) one.give(again.entry, { state: { name: 'k2', dropped: false }, bytes: 1 }, false)
    one.sweep(Date.now() + 2_000)
    await one.settled()
    expect(log.slice(-2)).toEqual(['one save k', 'one release k'])
    const moved = await two.take('k', Date.now(), later())
    expect(moved.ok && moved.entry.state?.name).toBe('k2')
    expect(claims.get('k')?.holder).toBe('two')
  })

  test("a resume's take waits for another program's claim in flight in this table (which the hold refuses) instead of taking the session for gone on", async () => {
    let open!: () => void
    const gate = new Promise<void>((resolve) => (open = resolve))
    // The session is held for a suspended program's resume (`parked:x`); this process's other program's claim is slow.
    const claims = new Map<string, string>([['k', 'parked:x']])
    const spill: SessionSpill<State> = {
      suspendAfterMs: 60_000,
      storeWaitMs: 60_000,
      save: async () => undefined,
      load: async () => undefined,
      remove: async () => false,
      claim: async (key, _ttlMs, replaces) => {
        if (replaces === undefined) await gate
        const holder = claims.get(key)
        if (holder !== undefined && holder !== 'me' && holder !== replaces) return { holder, expiresInMs: 60_000 }
        claims.set(key, 'me')
        return undefined
      },
      release: async () => undefined,
    }
    const table = tableOf(4, spill)
    const other = table.take('k', Date.now(), later())
    await tick()
    const resumed = table.take('k', Date.now(), later(), 'parked:x')
    await tick()
    open()
    expect(await other).toMatchObject({
      ok: false,
      message: expect.stringMatching(/^session "k" waits for the resume of a program of it that suspended/) as unknown,
    })
    expect(await resumed).toMatchObject({ ok: true, fresh: false })
    expect(claims.get('k')).toBe('me')
  })

  test('endSession, expiry and dispose end the claims; the claim of a running session is renewed before it runs out', async () => {
    const { claims, spillFor } = sharedStore()
    // A claim lasts 200 ms past its run: the table's own sweeps (every 50 ms) renew it.
    const table = tableOf(4, spillFor('one', { suspendAfterMs: 1_000, claimMs: 200 }))
    await runIn(table, 'ended')
    await table.end('ended')
    await table.settled()
    expect(claims.has('ended')).toBe(false)
    const running = await table.take('long', Date.now(), { deadline: performance.now() + 10 })
    expect(running.ok).toBe(true)
    const first = claims.get('long')?.until as number
    await new Promise((resolve) => setTimeout(resolve, 400))
    await table.settled()
    expect(claims.get('long')?.holder).toBe('one')
    expect(claims.get('long')?.until).toBeGreaterThan(first)
    if (running.ok) table.give(running.entry, { state: { name: 'long', dropped: false }, bytes: 1 }, true)
    await runIn(table, 'idle')
    await table.close()
    expect([...claims.keys()]).toEqual([])
  })

  test("a table whose claim another process took drops its state without saving it, and refuses the session's next run", async () => {
    const { claims, saved, log, spillFor } = sharedStore()
    const one = tableOf(4, spillFor('one'))
    const turn = await one.take('k', Date.now(), later())
    if (!turn.ok) throw new Error('not taken')
    // Its claim ran out (a process paused past it), and another process took the session.
    claims.set('k', { holder: 'two', until: Date.now() + 60_000 })
    saved.set('k', { name: 'two-state', dropped: false })
    one.sweep(Date.now() + 10 ** 9)
    await one.settled()
    one.give(turn.entry, { state: { name: 'one-state', dropped: false }, bytes: 1 }, true)
    const next = await one.take('k', Date.now(), later())
    expect(next).toMatchObject({
      ok: false,
      message: expect.stringMatching(
        /^session "k" is held by another process .*this process's claim on it had lapsed: this program did not run, and the state this process held was dropped$/,
      ),
    })
    one.sweep(Date.now() + 10 ** 9)
    await one.settled()
    expect(saved.get('k')?.name).toBe('two-state')
    expect(log.filter((line) => line.includes('save'))).toEqual([])
    expect(claims.get('k')?.holder).toBe('two')
  })

  test('endSession of a session another process holds throws claimed and drops nothing; once it is let go of, it ends everywhere', async () => {
    const { claims, saved, spillFor } = sharedStore()
    const one = tableOf(4, spillFor('one'))
    const two = tableOf(4, spillFor('two'))
    await runIn(one, 'k')
    const error: unknown = await two.end('k').catch((thrown: unknown) => thrown)
    expect(error).toBeInstanceOf(SessionStoreError)
    expect(error).toMatchObject({
      code: 'claimed',
      message: expect.stringMatching(/^session "k" is held by another process .*: it was not ended$/),
    })
    const still = await one.take('k', Date.now(), later())
    expect(still.ok && still.entry.state?.name).toBe('k')
    if (still.ok) one.give(still.entry, { state: { name: 'k', dropped: false }, bytes: 1 }, false)
    one.sweep(Date.now() + 2_000)
    await one.settled()
    expect(saved.has('k')).toBe(true)
    expect(await two.end('k')).toBe(true)
    await two.settled()
    expect(saved.has('k')).toBe(false)
    expect(claims.has('k')).toBe(false)
  })

  test('a store that fails to claim refuses the run and leaves the saved state as it was; resuming into a session another process holds throws claimed', async () => {
    const { saved, spillFor } = sharedStore()
    saved.set('k', { name: 'kept', dropped: false })
    let failing = true
    const one = tableOf(4, spillFor('one', { failClaims: () => failing }))
    const refused = await one.take('k', Date.now(), later())
    expect(refused).toEqual({
      ok: false,
      reason: 'store',
      message:
        'the session store failed to claim session "k" for this process (connection reset); the program did not run, and the session\'s saved state is as it was',
    })
    failing = false
    const turn = await one.take('k', Date.now(), later())
    expect(turn.ok && turn.entry.state?.name).toBe('kept')
    const two = tableOf(4, spillFor('two'))
    const error: unknown = await two
      .attach('k', { name: 'resumed', dropped: false }, 1, 1)
      .catch((thrown: unknown) => thrown)
    expect(error).toBeInstanceOf(SessionStoreError)
    expect(error).toMatchObject({
      code: 'claimed',
      message: expect.stringMatching(/^session "k" is held by another process .*: it was not resumed here$/),
    })
    expect(two.size).toBe(0)
  })
})

test('a store that cannot be read refuses the run (the saved state is not started over and later saved over); a saved state that cannot be resumed starts fresh', async () => {
  const { spill, saved, pending } = slowSpill()
  saved.set('k', { name: 'saved', dropped: false })
  let failure: Error | undefined = new SessionStoreError(
    'unavailable',
    'the session store failed to read session "k": ECONNRESET',
  )
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
    message:
      'the session store failed to read session "k": ECONNRESET; the program did not run, and the session\'s saved state is as it was',
  })
  expect(table.size).toBe(0)
  failure = undefined
  const turn = await table.take('k', Date.now(), later())
  expect(turn.ok && turn.entry.state?.name).toBe('saved')
  if (turn.ok) table.give(turn.entry, { reason: 'no change' }, false)
  await table.end('k')
  saved.set('k', { name: 'saved', dropped: false })
  failure = new Error('its HMAC does not match')
  expect(await table.take('k', Date.now(), later())).toMatchObject({
    ok: true,
    fresh: true,
    note: expect.stringContaining('could not be resumed (its HMAC does not match); it starts fresh'),
  })
  expect(pending).toEqual([])
})

test("a claim's renewal that the store never answers ends the run's wait at its deadline (and at its abort), not never", async () => {
  const { spillFor } = sharedStore()
  // Claims of 20 ms past their run: any run of 50 ms needs a renewal first.
  const spill = spillFor('one', { claimMs: 20 })
  const claim = spill.claim
  let stalled = false
  const table = tableOf(4, {
    ...spill,
    claim: (key, ttlMs) =>
      stalled ? new Promise(() => undefined) : (claim?.(key, ttlMs) ?? Promise.resolve(undefined)),
  })
  await runIn(table, 'k', { deadline: performance.now() + 10 })
  stalled = true
  // The renewal the next run needs never answers.
  const turn = await table.take('k', Date.now(), { deadline: performance.now() + 50 })
  expect(turn).toMatchObject({
    ok: false,
    reason: 'wall',
    message: expect.stringMatching(
      /^the session store had not answered the renewal of this process's claim on session "k" after \d+ ms$/,
    ),
  })
  const aborted = new AbortController()
  const waiting = table.take('k', Date.now(), { deadline: performance.now() + 60_000, signal: aborted.signal })
  aborted.abort()
  expect(await waiting).toMatchObject({ ok: false, reason: 'abort' })
})

test('a claim the store answers only after the run gave up on it is released then, not kept from the other processes until it runs out', async () => {
  const { claims, spillFor } = sharedStore()
  const spill = spillFor('one')
  const claim = spill.claim
  let answer: (() => void) | undefined
  const table = tableOf(4, {
    ...spill,
    // The store makes the claim, and answers late.
    claim: (key, ttlMs) =>
      new Promise((resolve) => {
        answer = () => void claim?.(key, ttlMs).then(resolve)
      }),
  })
  const turn = await table.take('k', Date.now(), { deadline: performance.now() + 20 })
  expect(turn).toMatchObject({ ok: false, reason: 'wall' })
  answer?.()
  await table.settled()
  expect(claims.has('k')).toBe(false)
  const other = tableOf(4, spillFor('two'))
  expect((await runIn(other, 'k')).ok).toBe(true)
})

describe('SessionTable.detach (suspendSession)', () => {
  /** A spill whose removals wait until the test settles them. */
  function removalSpill() {
    const { spill, saved } = slowSpill()
    const removals: { key: string; settle: () => void; fail: (error: Error) => void }[] = []
    spill.remove = (key) =>
      new Promise<boolean>((resolve, reject) => {
        removals.push({ key, settle: () => resolve(saved.delete(key)), fail: reject })
      })
    return { spill, saved, removals }
  }

  test("removes the store's older copy first; meanwhile the session runs nothing, and then it is the caller's alone", async () => {
    const { spill, saved, removals } = removalSpill()
    const table = tableOf(4, spill)
    saved.set('a', { name: 'older', dropped: false })
    await runIn(table, 'a')
    const detaching = table.detach('a')
    await tick()
    expect(removals.map((r) => r.key)).toEqual(['a'])
    const during = await table.take('a', Date.now(), { deadline: performance.now() + 60_000 })
    expect(during).toEqual({
      ok: false,
      message: 'session "a" is being suspended (suspendSession): this program did not run',
    })
    await expect(table.detach('a')).rejects.toThrow('session "a" is being suspended already')
    removals.shift()?.settle()
    expect((await detaching)?.state.name).toBe('a')
    expect([saved.has('a'), table.size]).toEqual([false, 0])
    const next = await table.take('a', Date.now(), { deadline: performance.now() + 60_000 })
    expect([next.ok, next.ok && next.fresh, next.ok && next.entry.state]).toEqual([true, true, undefined])
  })

  test('a removal that fails leaves the session as it was; one ended meanwhile gives nothing', async () => {
    const { spill, saved, removals } = removalSpill()
    const table = tableOf(4, spill)
    saved.set('a', { name: 'older', dropped: false })
    await runIn(table, 'a')
    const failing = table.detach('a')
    await tick()
    removals.shift()?.fail(new Error('store down'))
    await expect(failing).rejects.toMatchObject({
      code: 'unavailable',
      message:
        'the session store failed (store down) when its older copy of session "a" was to be removed: the session was not suspended, and stays here as it was',
    })
    const after = await table.take('a', Date.now(), { deadline: performance.now() + 60_000 })
    expect([after.ok && after.entry.state?.name, saved.get('a')?.name]).toEqual(['a', 'older'])
    if (after.ok) table.give(after.entry, { state: { name: 'a2', dropped: false }, bytes: 1 }, false)
    // endSession while the copy is being removed: the session is gone, nothing is handed over.
    const detaching = table.detach('a')
    await tick()
    const ending = table.end('a')
    removals.shift()?.settle()
    await tick()
    removals.shift()?.settle()
    expect(await detaching).toBeUndefined()
    expect(await ending).toBe(true)
    expect(table.size).toBe(0)
  })

  test('with claims: one lost to another process refuses the suspend (claimed) and removes nothing of the store', async () => {
    const { claims, saved, log, spillFor } = sharedStore()
    const one = tableOf(4, spillFor('one'))
    await runIn(one, 'k')
    one.sweep(Date.now() + 2_000)
    await one.settled()
    const again = await runIn(one, 'k')
    expect(again.ok).toBe(true)
    // Its claim lapsed (the store was unreachable, say) and another process took the session and saved a newer state.
    claims.set('k', { holder: 'two', until: Date.now() + 60_000 })
    saved.set('k', { name: 'newer, by two', dropped: false })
    const error: unknown = await one.detach('k').catch((thrown: unknown) => thrown)
    expect(error).toMatchObject({
      code: 'claimed',
      message: expect.stringMatching(
        /^session "k" is held by another process sharing the session store \(its claim runs out in \d+ s unless renewed; .*\): this process's claim on it had lapsed: it was not suspended, and the state this process held was dropped$/,
      ),
    })
    expect([saved.get('k')?.name, claims.get('k')?.holder, one.size]).toEqual(['newer, by two', 'two', 0])
    expect(log.filter((line) => line.includes('release'))).toEqual(['one release k'])
  })

  test('close() lets a suspend in progress end first, and saves the session a failed one left', async () => {
    const { spill, saved, pending, removals } = (() => {
      const made = slowSpill({ storeWaitMs: 100 })
      const removals: (() => void)[] = []
      // The removal never answers: the suspend fails at storeWaitMs.
      made.spill.remove = () => new Promise<boolean>((resolve) => removals.push(() => resolve(true)))
      return { ...made, removals }
    })()
    const table = tableOf(4, spill)
    await runIn(table, 'a')
    const detaching = table.detach('a')
    const closing = table.close()
    await expect(detaching).rejects.toMatchObject({ code: 'unavailable' })
    // The save waits behind the removal in the key's order: it comes once the store answers that.
    removals.shift()?.()
    await tick()
    expect(pending.map((p) => p.key)).toEqual(['a'])
    pending.shift()?.settle()
    await closing
    expect(saved.get('a')?.name).toBe('a')
  })
})
