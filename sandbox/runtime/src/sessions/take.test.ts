/**
 * Two runs of one session taken at once: the second is refused, whatever the microtasks between them.
 *
 * History: the first split of sessions.ts into this folder (c940100, reverted in 1d55637) let a session fork.
 * Its take() steps were async functions awaited one after the other, so a take looked at the table (no live
 * session; a live one free after its claim's renewal), then yielded before it changed it (the new entry put in;
 * the live one marked busy). Another take of the key in that gap found the session free too: both ran on one
 * state, both reported it kept, and the session kept one of them ('three runtimes ... no session forks' in
 * sandbox/quickjs/src/durable-session.test.ts failed 2 runs in 5 under load). Each test here failed on that code.
 */
import { describe, expect, test } from 'vitest'
import type { SessionTurn } from './entry.js'
import { resolveSessionLimits } from './limits.js'
import type { SessionSpill } from './spill.js'
import { SessionTable } from './table.js'

interface State {
  readonly name: string
}

/** A spill whose store answers at once (in microtasks) and grants every claim: only the table keeps runs apart. */
function claimingSpill(): SessionSpill<State> {
  const saved = new Map<string, State>()
  return {
    suspendAfterMs: 60_000,
    storeWaitMs: 60_000,
    save: async (key, state) => void saved.set(key, state),
    load: async (key) => {
      const state = saved.get(key)
      return state === undefined ? undefined : { state, bytes: 1, runs: 1 }
    },
    remove: async (key) => saved.delete(key),
    claim: async () => undefined,
    release: async () => undefined,
  }
}

const tableOf = (): SessionTable<State> => new SessionTable<State>(resolveSessionLimits({}), () => {}, claimingSpill())
const later = () => ({ deadline: performance.now() + 60_000 })
const taken = (turns: SessionTurn<State>[]): number => turns.filter((turn) => turn.ok).length

describe('two takes of one session at once', () => {
  test('of a session that is not live: one starts it, the other is refused as busy', async () => {
    const table = tableOf()
    const turns = await Promise.all([table.take('k', Date.now(), later()), table.take('k', Date.now(), later())])
    expect(taken(turns)).toBe(1)
    expect(turns.find((turn) => !turn.ok)).toMatchObject({ message: expect.stringMatching(/running another program/) })
  })

  test('of a live session whose claim is renewed first: one takes it, the other is refused as busy', async () => {
    const table = tableOf()
    // Resumed into: claimed for a claim's time only, so a run with a long wall renews the claim before it runs.
    await table.attach('k', { name: 'resumed' }, 1, 1)
    const turns = await Promise.all([table.take('k', Date.now(), later()), table.take('k', Date.now(), later())])
    expect(taken(turns)).toBe(1)
    expect(turns.find((turn) => !turn.ok)).toMatchObject({ message: expect.stringMatching(/running another program/) })
  })

  test('while a suspend takes the session out: no run takes it between the store and the table', async () => {
    const table = tableOf()
    const first = await table.take('k', Date.now(), later())
    if (!first.ok) throw new Error(first.message)
    table.give(first.entry, { state: { name: 'before' }, bytes: 1 }, first.fresh)
    let suspended = false
    const detaching = table.detach('k').finally(() => (suspended = true))
    // Takes in microtasks only, as fast as they come, until the suspend ends: none may take the session.
    const takes: SessionTurn<State>[] = []
    for (let i = 0; i < 1_000 && !suspended; i++) takes.push(await table.take('k', Date.now(), later()))
    expect(await detaching).toMatchObject({ state: { name: 'before' } })
    expect(takes.filter((turn) => turn.ok && turn.entry.state !== undefined)).toEqual([])
  })
})
