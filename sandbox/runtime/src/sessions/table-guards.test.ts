/**
 * Behaviours of `SessionTable` that no other test guarded (a mutation trial changed each and every test
 * still passed): each test here fails when its guard is taken out.
 */
import { describe, expect, test } from 'vitest'
import { SandboxUsageError } from '../errors.js'
import type { SessionTurn } from './entry.js'
import { resolveSessionLimits } from './limits.js'
import type { SessionSpill } from './spill.js'
import { SessionTable } from './table.js'

interface State {
  readonly name: string
  dropped: boolean
}

const state = (name: string): State => ({ name, dropped: false })
const later = () => ({ deadline: performance.now() + 60_000 })

function tableOf(maxSessions = 4, spill?: SessionSpill<State>): SessionTable<State> {
  return new SessionTable<State>(resolveSessionLimits({ maxSessions }), (held) => (held.dropped = true), spill)
}

type Taken = Extract<SessionTurn<State>, { ok: true }>

/** `key`'s session taken for a run, or the test fails with why not. */
async function taken(table: SessionTable<State>, key: string, wait = later()): Promise<Taken> {
  const turn = await table.take(key, Date.now(), wait)
  if (!turn.ok) throw new Error(`not taken: ${turn.message}`)
  return turn
}

/** Takes `key`, leaves a state named `name`, gives it back; the turn. */
async function runIn(table: SessionTable<State>, key: string, name = key): Promise<SessionTurn<State>> {
  const turn = await taken(table, key)
  table.give(turn.entry, { state: state(name), bytes: 1 }, turn.fresh)
  return turn
}

/** A spill that keeps its saves in memory; `remove`, `unhand` and `claim` do as the test sets them. */
function memorySpill(overrides: Partial<SessionSpill<State>> = {}) {
  const saved = new Map<string, State>()
  const spill: SessionSpill<State> = {
    suspendAfterMs: 60_000,
    storeWaitMs: 60_000,
    save: async (key, held) => void saved.set(key, state(held.name)),
    load: async (key) => {
      const held = saved.get(key)
      return held === undefined ? undefined : { state: state(held.name), bytes: 1, runs: 1 }
    },
    remove: async (key) => saved.delete(key),
    ...overrides,
  }
  return { spill, saved }
}

const never = <T>(): Promise<T> => new Promise<T>(() => undefined)

describe('suspendSession (detach)', () => {
  test.each([
    ['without a store', undefined],
    ['with a store', memorySpill().spill],
  ])('of a session whose program runs is refused %s, and the run keeps its session', async (_, spill) => {
    const table = tableOf(4, spill)
    await runIn(table, 'a', 'before')
    const turn = await taken(table, 'a')
    const refused = new SandboxUsageError('session "a" is running a program: suspend it once the program has ended')
    await expect(table.detach('a')).rejects.toThrow(refused)
    expect(table.size).toBe(1)
    table.give(turn.entry, { state: state('after'), bytes: 1 }, turn.fresh)
    expect((await table.detach('a'))?.state.name).toBe('after')
  })
})

describe("a session's note", () => {
  test('is told to the next run once, not to the runs after it', async () => {
    const table = tableOf()
    await runIn(table, 'a')
    const suspended = await taken(table, 'a')
    await table.park(suspended.entry, 'parked:x', 60_000, false)
    await table.unpark('a', 'parked:x')
    const told = await taken(table, 'a')
    expect(told.note).toMatch(/was dropped without being resumed/)
    table.give(told.entry, { state: state('a'), bytes: 1 }, told.fresh)
    const next = await taken(table, 'a')
    expect(next.note).toBeUndefined()
  })
})

describe('the cap on live sessions (maxSessions)', () => {
  test('lets the least recently used session go, not the one that started first', async () => {
    const table = tableOf(2)
    await runIn(table, 'a')
    await runIn(table, 'b')
    await runIn(table, 'a', 'a2')
    await runIn(table, 'c')
    const a = await taken(table, 'a')
    expect([a.fresh, a.entry.state?.name]).toEqual([false, 'a2'])
    table.give(a.entry, { state: state('a3'), bytes: 1 }, false)
    const b = await taken(table, 'b')
    const note =
      "the session's earlier state was dropped: it was the least recently used of 2 sessions (maxSessions) when a new one started"
    expect(b).toMatchObject({ fresh: true, note })
  })
})

describe('resumeSession (attach)', () => {
  test('into a session whose program runs is refused, and the run keeps its session', async () => {
    const table = tableOf()
    const turn = await taken(table, 'a')
    const refused = new SandboxUsageError('session "a" is running a program: resume into it once the program has ended')
    await expect(table.attach('a', state('resumed'), 1, 1)).rejects.toThrow(refused)
    table.give(turn.entry, { state: state('ran'), bytes: 1 }, turn.fresh)
    expect((await taken(table, 'a')).entry.state?.name).toBe('ran')
  })

  test('into a session being suspended is refused as such', async () => {
    let removed!: () => void
    const { spill } = memorySpill({ remove: () => new Promise<boolean>((resolve) => (removed = () => resolve(true))) })
    const table = tableOf(4, spill)
    await runIn(table, 'a')
    const detaching = table.detach('a')
    const refused = new SandboxUsageError('session "a" is being suspended: resume into it once that has ended')
    await expect(table.attach('a', state('resumed'), 1, 1)).rejects.toThrow(refused)
    removed()
    expect((await detaching)?.state.name).toBe('a')
  })
})

describe('a store that does not answer', () => {
  test('endSession says the session may still be saved there', async () => {
    const { spill } = memorySpill({ storeWaitMs: 20, remove: never })
    const table = tableOf(4, spill)
    await runIn(table, 'k')
    const message = 'the session store did not answer within 20 ms: session "k" may still be saved there'
    await expect(table.end('k')).rejects.toMatchObject({ code: 'unavailable', message })
  })

  test('dropping a suspended run held in the store says the session stays held until the hold ends', async () => {
    const { spill } = memorySpill({ storeWaitMs: 20, unhand: never })
    const table = tableOf(4, spill)
    await expect(table.unpark('k', 'parked:x')).rejects.toMatchObject({
      code: 'unavailable',
      message:
        'the session store did not answer within 20 ms: session "k" stays held for the dropped run until its hold ends',
    })
  })
})

describe("a claim's renewal that the store fails", () => {
  test('lets the run go on while the claim still covers it, and refuses it once it would not', async () => {
    let failing = false
    const { spill } = memorySpill({
      suspendAfterMs: 60_000,
      claimMs: 1_000,
      claim: async () => {
        if (failing) throw new Error('connection reset')
        return undefined
      },
      release: async () => undefined,
    })
    const table = tableOf(4, spill)
    // Claimed for a run with no time left: the claim lasts claimMs (1 s).
    const first = await taken(table, 'k', { deadline: performance.now() })
    table.give(first.entry, { state: state('k'), bytes: 1 }, first.fresh)
    failing = true
    // A run of 0.8 s is past half a claim's margin (a renewal is tried), but the claim still outlasts it.
    const covered = await taken(table, 'k', { deadline: performance.now() + 800 })
    table.give(covered.entry, { state: state('k2'), bytes: 1 }, false)
    const refused = await table.take('k', Date.now(), { deadline: performance.now() + 5_000 })
    const message =
      'the session store failed to renew this process\'s claim on session "k" (connection reset); the program did not run'
    expect(refused).toEqual({ ok: false, message })
  })
})

describe('a session whose program suspended, held in the store', () => {
  test('whose state before that program could not be saved tells its next run why that state is gone', async () => {
    const claims = new Map<string, string>()
    const { spill } = memorySpill({
      save: async () => {
        throw new Error('disk full')
      },
      claim: async (key, _ttl, replaces) => {
        const holder = claims.get(key)
        if (holder !== undefined && holder !== 'me' && holder !== replaces) return { holder, expiresInMs: 60_000 }
        claims.set(key, 'me')
        return undefined
      },
      release: async (key) => void (claims.get(key) === 'me' && claims.delete(key)),
      hand: async (key, holder) => void claims.set(key, holder),
      unhand: async (key, holder) => void (claims.get(key) === holder && claims.delete(key)),
    })
    const table = tableOf(4, spill)
    await runIn(table, 'k')
    const suspended = await taken(table, 'k')
    await table.park(suspended.entry, 'parked:x', 60_000, false)
    expect(claims.get('k')).toBe('parked:x')
    await table.unpark('k', 'parked:x')
    const next = await taken(table, 'k')
    const why = 'its state before a program that suspended could not be saved: disk full'
    expect(next).toMatchObject({ fresh: true, note: `the session's earlier state was dropped: ${why}` })
  })
})
