import type { CodeRunSessionInfo } from '../types.js'
import { Claims } from './claims.js'
import { endSession } from './end.js'
import type { SessionEntry, SessionTurn, SessionWait } from './entry.js'
import type { SessionLimits } from './limits.js'
import { LiveSessions } from './live.js'
import * as notes from './notes.js'
import { StoreOrder } from './order.js'
import { Parking } from './parking.js'
import type { TableParts } from './parts.js'
import { attachSession } from './resume.js'
import { Saves } from './saves.js'
import { CLAIM_MS, holdsInStore, type SessionSpill } from './spill.js'
import { waitForStore } from './store/wait.js'
import { detachSession, type DetachedSession } from './suspend.js'
import { takeSession } from './take.js'

/**
 * A backend's sandbox sessions, whatever their state is (a QuickJS memory diff, a live isolate): one
 * run at a time per session, an idle TTL (checked on use and by an unreferenced sweep timer), a cap
 * on live sessions (a new one lets the least recently used idle one go), and a byte budget per
 * session. With a `SessionSpill`, sessions let go of are saved there and resumed on their next run.
 */
export class SessionTable<S> {
  readonly limits: Readonly<SessionLimits>
  readonly #parts: TableParts<S>
  /** Suspends in progress (`detach`): `close` lets them end first, then saves what they left. */
  readonly #detaching = new Set<Promise<unknown>>()

  /**
   * `drop` releases a state the table lets go of (expired, evicted, ended, replaced); `spill`, when
   * given, keeps the sessions the table lets go of while idle.
   */
  constructor(limits: Readonly<SessionLimits>, drop: (state: S) => void = () => undefined, spill?: SessionSpill<S>) {
    this.limits = limits
    const order = new StoreOrder()
    const live = new LiveSessions<S>({
      limits,
      drop,
      sweepEveryMs: sweepEveryMs(limits, spill),
      sweep: () => this.sweep(),
      release: (entry) => this.#parts.claims.release(entry),
    })
    const claims = new Claims(spill, order, live)
    const saves = new Saves(spill, order, claims, live)
    const parking = new Parking(spill, order, live, saves)
    this.#parts = { spill, live, order, claims, saves, parking, sweep: (now) => this.sweep(now) }
  }

  /**
   * Whether this table's spill claims sessions in its store (file, Redis): a session run that suspends is held
   * there (`park`), so only a table of a runtime sharing that store can give its resume the session.
   */
  get holdsInStore(): boolean {
    return holdsInStore(this.#parts.spill)
  }

  get size(): number {
    return this.#parts.live.size
  }

  /**
   * Takes `key`'s session for a run, creating it when new (or refuses: busy, or every session busy at the
   * cap). A session that is not live is resumed from the spill when it is there; `wait` bounds how long
   * that may take (the session is then not taken, and its saved state stays where it is). `resumes`: the
   * turn is for the resume of a run that suspended in this session (`park`, its `holder`): it takes the
   * session that run holds, here or from another process (claimed from `holder`), and loads nothing (the
   * run's state holds the session's); refused when the session went on without it (its hold ended).
   */
  take(key: string, now = Date.now(), wait?: SessionWait, resumes?: string): Promise<SessionTurn<S>> {
    return takeSession(this.#parts, key, now, wait, resumes)
  }

  /**
   * Takes an idle live session out of the table (to suspend it): its state and runs, or undefined when there is
   * none (or it was ended meanwhile). Throws `SandboxUsageError` while it runs. With a spill, the copy the store may
   * hold from an earlier idle period goes first, the caller's bytes being the session from then on: this process's
   * claim is renewed, then the copy removed, in the key's order of store operations (after an idle save in flight),
   * and only then is the claim released (another process's newer save is never removed). Meanwhile the session is
   * busy (no run or save takes it). Throws `SessionStoreError` `claimed` when another process holds the session
   * now (this process's copy is dropped, as a run would drop it), and `unavailable`, the session left here as it
   * was, when the store fails or does not answer within storeWaitMs.
   */
  detach(key: string): Promise<DetachedSession<S> | undefined> {
    return detachSession(this.#parts, this.#detaching, key)
  }

  /**
   * Puts a resumed session in the table, replacing an idle live one of that key. Throws `SnapshotError`
   * (`too-large`) for a state over `maxSessionBytes`, `SandboxUsageError` while that one runs, and
   * `SessionStoreError` (`unavailable`) when room for it needs a save and the store has not taken one of the
   * `maxSessions` in progress within the spill's `storeWaitMs`; the table is then unchanged.
   */
  attach(key: string, state: S, bytes: number, runs: number): Promise<void> {
    return attachSession(this.#parts, key, state, bytes, runs)
  }

  /**
   * Gives the session back after its run: `state` (with its size) becomes the session's when given
   * and within the budget; otherwise the session keeps the state it had. Returns what the run's
   * result says about the session.
   */
  give(
    entry: SessionEntry<S>,
    left: { state: S; bytes: number } | { reason: string },
    fresh: boolean,
    note?: string,
  ): CodeRunSessionInfo {
    const { live } = this.#parts
    entry.busy = false
    entry.runs++
    entry.lastUsed = Date.now()
    let kept = false
    let why = note
    if (entry.ended) {
      if ('state' in left) live.drop(left.state)
      why = notes.ENDED_DURING_RUN
    } else if ('reason' in left) {
      why = left.reason
    } else if (left.bytes > this.limits.maxSessionBytes) {
      live.drop(left.state)
      why = notes.runOverBudget(left.bytes, this.limits.maxSessionBytes)
    } else {
      if (entry.state !== undefined) live.drop(entry.state)
      entry.state = left.state
      entry.bytes = left.bytes
      kept = true
    }
    const bytes = entry.ended ? 0 : entry.bytes
    const said = why === undefined ? {} : { note: why }
    const info: CodeRunSessionInfo = { key: entry.key, fresh, kept, bytes, runs: entry.runs, ...said }
    if (entry.ended) live.remove(entry.key)
    else if (kept) entry.bare = undefined
    // A resume that left no state: the session's state is the one its store kept from before the resumed run.
    else if (entry.bare === true && entry.state === undefined) live.forget(entry, undefined)
    return info
  }

  /**
   * Gives the session back after its run suspended (durable approval): the session is held for that run's
   * resume (`take` with `resumes: holder`) for `holdMs`, and keeps its state from before the run, which it goes
   * on from if the hold ends first. With a spill that claims, that state goes to the store and the claim to
   * `holder` (so the resume may happen in another process, and no process runs the session meanwhile),
   * awaited (at most the spill's `storeWaitMs`) so that whoever gets the run's state finds the session held; else
   * the entry stays here, busy.
   */
  park(entry: SessionEntry<S>, holder: string, holdMs: number, fresh: boolean): Promise<CodeRunSessionInfo> {
    return this.#parts.parking.park(entry, holder, holdMs, fresh)
  }

  /**
   * Ends the hold of `holder` (`park`) on `key`: its suspended run will not be resumed, and the session goes on
   * from its state before that run (live here, or saved in the spill's store, whose claim `holder` had).
   */
  unpark(key: string, holder: string): Promise<void> {
    return this.#parts.parking.unpark(key, holder)
  }

  /**
   * Drops `key`'s session, live or saved; a run in progress finishes and its state is not kept.
   * Whether it existed (live, or saved in the spill). Throws `SessionStoreError` `claimed` when another
   * process sharing the store holds it (nothing is dropped), `unavailable` when the store does not answer.
   */
  end(key: string): Promise<boolean> {
    return endSession(this.#parts, key)
  }

  /** Drops idle sessions unused for `idleTtlMs`; with a spill, saves those idle for `suspendAfterMs`. */
  sweep(now = Date.now()): void {
    const { spill, live, claims, saves, parking } = this.#parts
    for (const entry of live.values()) {
      // Its suspended program was not resumed in time: the session goes on from its state before that program.
      parking.endIfDue(entry, now)
      // A claim that would run out before the next sweeps is renewed, for a running session too.
      claims.renewIfDue(entry, now)
      if (entry.busy) continue
      const idle = now - entry.lastUsed
      const failed = entry.saveFailed
      if (idle >= this.limits.idleTtlMs) live.forget(entry, notes.idleTooLong(this.limits.idleTtlMs, failed?.why))
      // At the cap of saves in progress it stays live (and counts as live) until the store catches up; after a save
      // that failed, the next is tried suspendAfterMs later.
      else if (spill !== undefined && idle >= spill.suspendAfterMs && !saves.full(entry)) {
        if (failed === undefined || now - failed.at >= spill.suspendAfterMs) saves.letGo(entry, notes.IDLE, true)
      }
    }
    live.stopIfEmpty()
  }

  /** `key`'s store operations in progress (the release of `detach`), given up on after the spill's `storeWaitMs`. */
  quiet(key: string): Promise<void> {
    return this.#parts.order.quiet(key, this.#parts.saves.storeWaitMs)
  }

  /** Saves in progress (a caller that must not lose them, e.g. at shutdown, waits for these). */
  settled(): Promise<void> {
    return this.#parts.order.settled()
  }

  /**
   * Saves every idle session to the spill (none: drops them), waits for the saves (at most the spill's
   * `storeWaitMs`: a save the store has not confirmed by then is given up), and drops the rest.
   */
  async close(): Promise<void> {
    const { live, claims, saves } = this.#parts
    live.close()
    // A suspend in progress ends first (within storeWaitMs): one that failed leaves its session to be saved below.
    await Promise.allSettled([...this.#detaching])
    saves.cancelRetries()
    for (const entry of [...live.values()]) {
      // A session held for a suspended run's resume goes with its state from before that run.
      if (!entry.busy || entry.parked !== undefined) saves.letGo(entry, notes.DISPOSED)
      else claims.release(entry)
    }
    await waitForStore(this.settled(), { deadline: performance.now() + saves.storeWaitMs })
    this.clear()
  }

  /** Drops every session. */
  clear(): void {
    this.#parts.live.clear()
    this.#parts.saves.clear()
  }
}

/** How often the sweeps run: often enough for the TTL, the idle saves and the claims' renewals (half a claim). */
function sweepEveryMs<S>(limits: Readonly<SessionLimits>, spill: SessionSpill<S> | undefined): number {
  const claimMs = spill?.claimMs ?? CLAIM_MS
  const renewals = spill?.claim === undefined ? Infinity : claimMs / 2
  const every = Math.min(limits.idleTtlMs, spill?.suspendAfterMs ?? Infinity, renewals) / 2
  return Math.max(50, Math.min(60_000, every))
}
