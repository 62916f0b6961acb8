import type { Claims } from './claims.js'
import type { SessionEntry, SessionTurn, SessionWait } from './entry.js'
import { keepRecent, type LiveSessions } from './live.js'
import * as notes from './notes.js'
import type { StoreOrder } from './order.js'
import { storeWaitOf, type SessionSpill } from './spill.js'
import { SessionStoreError } from './store/errors.js'
import { waitForStore } from './store/wait.js'

/** What a failed save tells the session's next run. */
type Failed = (error: unknown) => string
/** Whether a failed save's state went back to the session (`Saves.letGo` with `retry`). */
type Keep = (error: unknown) => boolean

/** An idle save that may give its state back if it fails (`Saves.letGo` with `retry`). */
interface Retry {
  /** `end`, `detach`, `attach` or `close` came meanwhile: the state then goes as it did. */
  cancelled: boolean
  /** The save failed and its state went back to the session. */
  kept: boolean
}

/** What a session held when this table let go of it: its state and runs, and until when this process's claim held. */
export interface HeldState<S> {
  readonly key: string
  readonly state: S | undefined
  readonly runs: number
  /** 0: none. */
  readonly claimedUntil: number
}

/** What `detach`'s removal of the store's copy found: another process's claim, or the store's failure. */
export type StoredRemoval = { held?: string; failure?: { error: unknown } | { waitedMs: number } }

/**
 * Saving sessions to the spill and loading them from it: the sessions this table lets go of are saved (then
 * their claims end), a session that is not live is loaded before it starts fresh, and a save that failed is told
 * to the session's next run, or gives its state back for the sweeps to try again.
 */
export class Saves<S> {
  readonly #spill: SessionSpill<S> | undefined
  readonly #order: StoreOrder
  readonly #claims: Claims<S>
  readonly #live: LiveSessions<S>
  /**
   * Keys this table saved to the spill, and when (epoch ms), until their next load or end: a load that finds nothing
   * for one tells the run that the store lost the state (expired there, evicted, flushed). Bounded as the gone reasons.
   */
  readonly #savedHere = new Map<string, number>()
  /** The idle saves in progress that may give their state back if they fail, by key. */
  readonly #retrying = new Map<string, Retry>()

  constructor(spill: SessionSpill<S> | undefined, order: StoreOrder, claims: Claims<S>, live: LiveSessions<S>) {
    this.#spill = spill
    this.#order = order
    this.#claims = claims
    this.#live = live
  }

  /** How long `close`, `end` and the other waits for the spill's store last (the spill's `storeWaitMs`). */
  get storeWaitMs(): number {
    return storeWaitOf(this.#spill)
  }

  /** Letting `entry` go would start a save, and `maxSessions` saves are in progress already. */
  full(entry: SessionEntry<S>): boolean {
    return this.#spill !== undefined && entry.state !== undefined && this.#order.saving >= this.#live.limits.maxSessions
  }

  /** Why a session waits for room: the saves in progress. */
  behind(): string {
    return notes.behind(this.#order.saving, this.#live.limits.maxSessions)
  }

  /**
   * An idle session leaves memory: saved to the spill when there is one, else dropped. `retry`: a save that fails
   * (the store is down, or full) puts the session back in memory when nothing took its place meanwhile, for the
   * next sweeps to try again until its `idleTtlMs`: a store down for a few seconds does not lose idle sessions.
   */
  letGo(entry: SessionEntry<S>, why: string, retry = false): void {
    const spill = this.#spill
    const state = entry.state
    // Another process holds it now: what this one held must not go over that process's saves.
    if (entry.claimLost !== undefined) return this.#live.forget(entry, undefined, false)
    if (spill === undefined || state === undefined) return this.#live.forget(entry, why)
    this.#live.remove(entry.key)
    entry.state = undefined
    const held = { key: entry.key, state, runs: entry.runs, claimedUntil: entry.claimedUntil }
    const { key, claimedUntil } = held
    entry.claimedUntil = 0
    const again: Retry = { cancelled: false, kept: false }
    if (retry) this.#retrying.set(key, again)
    const keep = retry ? (error: unknown): boolean => this.#giveBack(entry, held, state, again, error) : undefined
    // Saved, then the claim ended (another process may take the session once the store has it).
    const after = async (): Promise<void> => {
      if (this.#retrying.get(key) === again) this.#retrying.delete(key)
      if (claimedUntil > 0 && !again.kept) await spill.release?.(key).catch(() => undefined)
    }
    void this.saveThen(held, (error) => notes.saveFailed(why, error), after, keep)
  }

  /**
   * After a failed idle save of `entry`: its state goes back to a run of the session that started meanwhile and
   * found no state, or to the table when there is room; whether it went back.
   */
  #giveBack(entry: SessionEntry<S>, held: HeldState<S>, state: S, again: Retry, error: unknown): boolean {
    if (again.cancelled) return false
    const { runs, claimedUntil } = held
    const live = this.#live.get(entry.key)
    if (live !== undefined) {
      // A run of the session started during the save: it waits for the save before it loads (the key's store order),
      // and takes the state from here instead (see `take`).
      const waiting = live.busy && live.state === undefined && live.bare !== true && !live.ended
      if (!waiting || live.claimLost !== undefined) return false
      Object.assign(live, { state, bytes: entry.bytes, runs })
      return (again.kept = true)
    }
    if (this.#live.size >= this.#live.limits.maxSessions) return false
    Object.assign(entry, { state, claimedUntil, saveFailed: { at: Date.now(), why: notes.brief(error) } })
    this.#live.add(entry)
    return (again.kept = true)
  }

  /** An idle save of `key` in progress no longer gives its state back if it fails. */
  cancelRetry(key: string): void {
    const again = this.#retrying.get(key)
    if (again === undefined) return
    again.cancelled = true
    this.#retrying.delete(key)
  }

  /** No idle save in progress gives its state back any more (the table closes). */
  cancelRetries(): void {
    for (const key of [...this.#retrying.keys()]) this.cancelRetry(key)
  }

  /**
   * Saves what a session `held` to the spill and drops it, then `after()` (which ends the claim or hands it on): one
   * store operation of its key, counted among the saves in progress. The sweeps no longer renew the claim this
   * process held (`claimedUntil`): one that would run out during the save is renewed first, and one that lapsed
   * leaves the state unsaved. A failed save is remembered for the session's next run, unless `keep()` took the state
   * back (a store that failed, not another process's claim).
   */
  saveThen<T>(held: HeldState<S>, failed: Failed, after: () => Promise<T>, keep?: Keep): Promise<T> {
    const { key, state, runs, claimedUntil } = held
    const spill = this.#spill as SessionSpill<S>
    const saveMs = this.storeWaitMs
    const claimMs = this.#claims.claimMs
    const saving = this.#order.serial(key, async () => {
      if (state !== undefined) {
        let kept = false
        try {
          if (claimedUntil > 0 && spill.claim !== undefined && claimedUntil - Date.now() < saveMs + claimMs / 2) {
            const other = await spill.claim(key, saveMs + claimMs)
            if (other !== undefined) {
              keep = undefined
              throw new Error(this.#claims.heldElsewhere(key, other, notes.LAPSED_ON_SAVE))
            }
          }
          await spill.save(key, state, runs)
          keepRecent(this.#savedHere, key, Date.now(), this.#live.limits.maxSessions)
        } catch (error) {
          kept = keep?.(error) === true
          if (!kept) this.#live.remember(key, failed(error))
        } finally {
          if (!kept) this.#live.drop(state)
        }
      }
      return after()
    })
    this.#order.count(saving)
    return saving
  }

  /**
   * `entry`'s session, new here, from the spill: its saved state when there is one (and it fits the budget), else
   * fresh, with a note saying why its earlier state is gone. Refused when the store does not answer before
   * `wait` ends, or cannot be read (the saved state then stays as it is).
   */
  async load(entry: SessionEntry<S>, wait: SessionWait | undefined): Promise<SessionTurn<S>> {
    const { key } = entry
    const spill = this.#spill
    const gone = this.#live.takeGone(key)
    let note = gone === undefined ? undefined : notes.dropped(gone)
    if (spill !== undefined) {
      const loading = performance.now()
      try {
        // The state may be handed over meanwhile by an idle save of the session that failed (`#giveBack`).
        const load = () => (entry.state !== undefined ? Promise.resolve(undefined) : spill.load(key))
        const loaded = await waitForStore(this.#order.serial(key, load), wait ?? {})
        if (!loaded.ok) {
          if (this.#live.holds(entry)) this.#live.giveUp(entry)
          const message = notes.storeLate(key, 'load', Math.round(performance.now() - loading))
          return { ok: false, reason: loaded.reason, message }
        }
        if (entry.state !== undefined) return { ok: true, entry, fresh: false }
        const saved = loaded.value
        const savedAt = this.#savedHere.get(key)
        this.#savedHere.delete(key)
        if (saved === undefined && savedAt !== undefined) {
          note ??= notes.lostInStore(Math.round((Date.now() - savedAt) / 1000))
        }
        const max = this.#live.limits.maxSessionBytes
        if (saved !== undefined && saved.bytes > max) {
          // Saved by a runtime with a larger budget: it cannot be resumed here, as bytes that cannot be opened.
          this.#live.drop(saved.state)
          note = notes.notResumable(notes.overBudget(key, saved.bytes, max))
        } else if (saved !== undefined && !entry.ended) {
          Object.assign(entry, { state: saved.state, bytes: saved.bytes, runs: saved.runs })
          // What this process dropped was newer than what the store had: the run is told it goes on from that.
          if (gone === undefined) return { ok: true, entry, fresh: false }
          return { ok: true, entry, fresh: false, note: notes.olderFromStore(gone) }
        }
      } catch (error) {
        if (error instanceof SessionStoreError && error.code === 'unavailable') {
          if (this.#live.holds(entry)) this.#live.forget(entry, undefined)
          if (gone !== undefined) this.#live.remember(key, gone)
          return { ok: false, message: notes.unreadable(error) }
        }
        note = notes.notResumable(notes.brief(error))
      }
    }
    return note === undefined ? { ok: true, entry, fresh: true } : { ok: true, entry, fresh: true, note }
  }

  /** `detach`'s store part: the claim renewed, then the stored copy removed; why not, when not. Never throws. */
  async removeStored(entry: SessionEntry<S>): Promise<StoredRemoval> {
    const spill = this.#spill as SessionSpill<S>
    const waitMs = this.storeWaitMs
    const remove = async (): Promise<string | undefined> => {
      // For the removal's longest wait and a claim's time beyond: no other process takes the session meanwhile.
      const other = await this.#claims.claim(entry, { deadline: performance.now() + waitMs })
      if (other !== undefined) return this.#claims.heldElsewhere(entry.key, other, notes.LAPSED_ON_SUSPEND)
      await spill.remove(entry.key)
      return undefined
    }
    try {
      const done = await waitForStore(this.#order.serial(entry.key, remove), { deadline: performance.now() + waitMs })
      if (!done.ok) return { failure: { waitedMs: waitMs } }
      return done.value === undefined ? {} : { held: done.value }
    } catch (error) {
      return { failure: { error } }
    }
  }

  /** Forgets that this table saved `key` (its saved state is the caller's now, or gone). */
  forgetSaved(key: string): void {
    this.#savedHere.delete(key)
  }

  clear(): void {
    this.#savedHere.clear()
  }
}
