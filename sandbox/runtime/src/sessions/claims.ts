import type { SessionEntry, SessionWait } from './entry.js'
import type { LiveSessions } from './live.js'
import { LAPSED_ON_RUN, heldElsewhere, renewalFailed } from './notes.js'
import type { StoreOrder } from './order.js'
import { CLAIM_MS, type SessionSpill } from './spill.js'
import type { SessionClaim } from './store/store.js'

/**
 * This process's claims on its sessions in the spill's store, which keep two processes sharing the store from
 * running one session at once: taken for a run and a claim's time beyond, renewed before they run out (by
 * the sweeps too), ended when the session leaves this process. Without a spill that claims, all of it is a no-op.
 */
export class Claims<S> {
  readonly #spill: SessionSpill<S> | undefined
  readonly #order: StoreOrder
  readonly #live: LiveSessions<S>

  constructor(spill: SessionSpill<S> | undefined, order: StoreOrder, live: LiveSessions<S>) {
    this.#spill = spill
    this.#order = order
    this.#live = live
  }

  /** Whether the spill claims sessions at all. */
  get active(): boolean {
    return this.#spill?.claim !== undefined
  }

  /** How long a claim lasts past what a run needs (renewed by the sweeps, at most a quarter of it apart). */
  get claimMs(): number {
    return this.#spill?.claimMs ?? CLAIM_MS
  }

  /**
   * The part of a claim that covers the run: its time left (0 without a deadline), at most ten claims' time.
   * The sweeps renew a running session's claim too; this covers a run that holds the event loop (inline
   * isolation) past them, without locking a session for hours after a crash when a run's wall is that long.
   */
  runMs(wait: SessionWait | undefined): number {
    return wait === undefined ? 0 : Math.min(10 * this.claimMs, Math.max(0, wait.deadline - performance.now()))
  }

  /** `entry`'s claim (if the store has claims) lasts through a run of `wait` and half a claim beyond. */
  covers(entry: SessionEntry<S>, wait: SessionWait | undefined): boolean {
    return !this.active || entry.claimedUntil - Date.now() >= this.runMs(wait) + this.claimMs / 2
  }

  /** Claims `entry`'s key for the run of `wait` and a claim's time beyond: `undefined` when held, else who holds it. */
  async claim(
    entry: SessionEntry<S>,
    wait: SessionWait | undefined,
    replaces?: string,
  ): Promise<SessionClaim | undefined> {
    const claim = this.#spill?.claim
    if (claim === undefined) return undefined
    const at = Date.now()
    const ttl = Math.ceil(this.runMs(wait) + this.claimMs)
    const refused = await claim(entry.key, ttl, replaces)
    if (refused === undefined) entry.claimedUntil = at + ttl
    return refused
  }

  /**
   * Renews `entry`'s claim: `undefined` when renewed or when the store failed but the claim still holds
   * (tried again later), else why the session cannot run here (another process holds it now: `claimLost`).
   */
  async renew(entry: SessionEntry<S>, wait: SessionWait | undefined): Promise<string | undefined> {
    if (entry.renewing !== undefined) return entry.renewing
    const renewing = this.#order.serial(entry.key, async () => {
      // Let go of, ended, replaced meanwhile: nothing to renew.
      if (!this.#live.holds(entry) || entry.claimedUntil === 0) return undefined
      try {
        const other = await this.claim(entry, wait)
        if (other !== undefined) entry.claimLost = this.heldElsewhere(entry.key, other, LAPSED_ON_RUN)
        return entry.claimLost
      } catch (error) {
        return entry.claimedUntil > Date.now() + this.runMs(wait) ? undefined : renewalFailed(entry.key, error)
      }
    })
    entry.renewing = renewing
    try {
      return await renewing
    } finally {
      entry.renewing = undefined
    }
  }

  /** Renews `entry`'s claim, running or idle, when it would run out before the next sweeps. */
  renewIfDue(entry: SessionEntry<S>, now: number): void {
    if (entry.claimedUntil > 0 && entry.claimedUntil - now < this.claimMs / 2 && entry.claimLost === undefined) {
      void this.renew(entry, undefined)
    }
  }

  /** Ends `entry`'s claim, after the key's store operations in progress. */
  release(entry: SessionEntry<S>): void {
    const release = this.#spill?.release
    if (release === undefined || entry.claimedUntil === 0) return
    entry.claimedUntil = 0
    void this.#order.serial(entry.key, () => release(entry.key)).catch(() => undefined)
  }

  /**
   * Ends this process's claim on `key` once the key's store operations in progress have ended: after a claim
   * given up on (the store answered too late, or failed), which may yet have been made, so that it does not keep
   * the session from the other processes until it runs out.
   */
  releaseLate(key: string): void {
    const release = this.#spill?.release
    if (release === undefined || this.#live.has(key)) return
    void this.#order.serial(key, () => (this.#live.has(key) ? Promise.resolve() : release(key))).catch(() => undefined)
  }

  /** Why `key` cannot run here: `other` holds it. */
  heldElsewhere(key: string, other: SessionClaim, then: string): string {
    return heldElsewhere(key, other, then, this.#spill?.suspendAfterMs)
  }
}
