/** `SessionTable` over a store with claims: one process at a time holds a session. */
import { describe, expect, test } from 'vitest'
import { SessionStoreError } from './errors.js'
import { later, runIn, sharedStore, type State, tableOf, tick } from './fixtures/tables.js'
import type { SessionSpill } from './spill.js'

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
      message: expect.stringMatching(/^session "k" is held by another process sharing the session store \(its claim runs out in \d+ s unless renewed; a process lets a session go to the store once it has been idle for suspendAfterMs = 1000 ms\): this program did not run, and the session's state is unchanged/),
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
    expect(await other).toMatchObject({ ok: false, message: expect.stringMatching(/^session "k" waits for the resume of a program of it that suspended/) as unknown })
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
    expect(next).toMatchObject({ ok: false, message: expect.stringMatching(/^session "k" is held by another process .*this process's claim on it had lapsed: this program did not run, and the state this process held was dropped$/) })
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
    expect(error).toMatchObject({ code: 'claimed', message: expect.stringMatching(/^session "k" is held by another process .*: it was not ended$/) })
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
    expect(refused).toEqual({ ok: false, reason: 'store', message: 'the session store failed to claim session "k" for this process (connection reset); the program did not run, and the session\'s saved state is as it was' })
    failing = false
    const turn = await one.take('k', Date.now(), later())
    expect(turn.ok && turn.entry.state?.name).toBe('kept')
    const two = tableOf(4, spillFor('two'))
    const error: unknown = await two.attach('k', { name: 'resumed', dropped: false }, 1, 1).catch((thrown: unknown) => thrown)
    expect(error).toBeInstanceOf(SessionStoreError)
    expect(error).toMatchObject({ code: 'claimed', message: expect.stringMatching(/^session "k" is held by another process .*: it was not resumed here$/) })
    expect(two.size).toBe(0)
  })
})

test("a claim's renewal that the store never answers ends the run's wait at its deadline (and at its abort), not never", async () => {
  const { spillFor } = sharedStore()
  // Claims of 20 ms past their run: any run of 50 ms needs a renewal first.
  const spill = spillFor('one', { claimMs: 20 })
  const claim = spill.claim
  let stalled = false
  const table = tableOf(4, { ...spill, claim: (key, ttlMs) => (stalled ? new Promise(() => undefined) : (claim?.(key, ttlMs) ?? Promise.resolve(undefined))) })
  await runIn(table, 'k', { deadline: performance.now() + 10 })
  stalled = true
  // The renewal the next run needs never answers.
  const turn = await table.take('k', Date.now(), { deadline: performance.now() + 50 })
  expect(turn).toMatchObject({ ok: false, reason: 'wall', message: expect.stringMatching(/^the session store had not answered the renewal of this process's claim on session "k" after \d+ ms$/) })
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
