import type { CodeRunSessionInfo } from '../types.js'
import type { SessionEntry, SessionTurn } from './entry.js'
import { SessionStoreError } from './store/errors.js'
import type { LiveSessions } from './live.js'
import * as notes from './notes.js'
import type { StoreOrder } from './order.js'
import type { Saves } from './saves.js'
import { holdsInStore, type SessionSpill } from './spill.js'
import { waitForStore } from './store/wait.js'

/**
 * Holding a session for the resume of a program of it that suspended (durable approval): the session runs
 * nothing else until that resume takes it, or the hold ends (dropped, or timed out) and the session goes on from
 * its state before that program. Held here, or, with a spill that claims, in the store (its claim handed to the
 * resume's holder), so that the resume may happen in another process.
 */
export class Parking<S> {
  readonly #spill: SessionSpill<S> | undefined
  readonly #order: StoreOrder
  readonly #live: LiveSessions<S>
  readonly #saves: Saves<S>

  constructor(spill: SessionSpill<S> | undefined, order: StoreOrder, live: LiveSessions<S>, saves: Saves<S>) {
    this.#spill = spill
    this.#order = order
    this.#live = live
    this.#saves = saves
  }

  /** Why `entry`, held for a resume, does not do what was asked (`then`). */
  refusal(entry: SessionEntry<S>, then: string, now = Date.now()): string {
    return `${notes.parkedMessage(entry.key, (entry.parked?.until ?? now) - now)}: ${then}`
  }

  /**
   * The turn of a run that finds `live` held for a resume: the resume's (by its holder, `resumes`), which takes the
   * session; anyone else's is refused.
   */
  takeHeld(live: SessionEntry<S>, now: number, resumes: string | undefined): SessionTurn<S> {
    if (live.parked?.holder !== resumes) return { ok: false, message: this.refusal(live, notes.NOT_RUN, now) }
    live.parked = undefined
    live.lastUsed = now
    return { ok: true, entry: live, fresh: false }
  }

  /** See `SessionTable.park`. */
  async park(entry: SessionEntry<S>, holder: string, holdMs: number, fresh: boolean): Promise<CodeRunSessionInfo> {
    const until = Date.now() + holdMs
    const { key, bytes, runs } = entry
    const info: CodeRunSessionInfo = { key, fresh, kept: false, bytes, runs, note: notes.PARKED }
    if (entry.ended) {
      // Ended during the run: nothing is held; a resume finds the session gone (and starts it from the run's state).
      this.#live.forget(entry, undefined)
      return { ...info, bytes: 0, note: notes.ENDED_DURING_RUN }
    }
    const spill = this.#spill
    if (!holdsInStore(spill) || entry.claimedUntil === 0) {
      entry.parked = { holder, until }
      return info
    }
    this.#live.remove(entry.key)
    this.#live.stopIfEmpty()
    const held = { key, state: entry.state, runs, claimedUntil: entry.claimedUntil }
    const hand = spill.hand.bind(spill)
    entry.state = undefined
    entry.claimedUntil = 0
    const saveMs = this.#saves.storeWaitMs
    // Saved (the state before the run, which the session goes on from if the hold ends), then held for the resume:
    // refused (another holder) or failed, the hold is not in the store.
    const handOver = async (): Promise<boolean> => (await hand(key, holder, holdMs).catch(() => 'failed')) === undefined
    const handing = this.#saves.saveThen(held, notes.parkSaveFailed, handOver)
    const handed = await waitForStore(handing, { deadline: performance.now() + saveMs })
    if (handed.ok && handed.value) return info
    // Not held in the store: another process may run the session meanwhile, and this run's resume would not keep its
    // state then.
    return { ...info, note: notes.holdUnconfirmed(handed.ok ? undefined : saveMs) }
  }

  /** See `SessionTable.unpark`. */
  async unpark(key: string, holder: string): Promise<void> {
    const live = this.#live.get(key)
    if (live?.parked?.holder === holder) return this.#goOn(live, Date.now(), notes.UNPARKED)
    const unhand = this.#spill?.unhand
    if (live !== undefined || unhand === undefined) return
    const waitMs = this.#saves.storeWaitMs
    const unhanding = this.#order.serial(key, () => unhand(key, holder))
    const ended = await waitForStore(unhanding, { deadline: performance.now() + waitMs })
    if (!ended.ok) throw new SessionStoreError('unavailable', notes.storeSilent(key, waitMs, 'unpark'))
  }

  /** Ends `entry`'s hold when it has run out by `now`: its suspended program was not resumed in time. */
  endIfDue(entry: SessionEntry<S>, now: number): void {
    if (entry.parked !== undefined && now >= entry.parked.until) this.#goOn(entry, now, notes.HOLD_ENDED)
  }

  /** The session goes on from its state before the program that suspended; its next run is told `note`. */
  #goOn(entry: SessionEntry<S>, now: number, note: string): void {
    entry.parked = undefined
    entry.busy = false
    entry.lastUsed = now
    entry.note = note
  }
}
