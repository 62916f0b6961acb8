import type { SessionEntry } from './entry.js'
import type { SessionLimits } from './limits.js'
import { allBusy } from './notes.js'

/** What `LiveSessions` is given by its table: how to drop a state, sweep, and end a claim. */
export interface LiveSessionsOptions<S> {
  readonly limits: Readonly<SessionLimits>
  /** Releases a state the table lets go of (expired, evicted, ended, replaced). */
  readonly drop: (state: S) => void
  /** How often the sweep timer fires while sessions are live. */
  readonly sweepEveryMs: number
  readonly sweep: () => void
  /** Ends this process's claim on `entry` in the spill's store, if it holds one. */
  readonly release: (entry: SessionEntry<S>) => void
}

/**
 * The sessions live in this process, least recently used first (the eviction order), with why the state of
 * those that are gone went (told to their next run), and an unreferenced timer that sweeps them while any is live.
 */
export class LiveSessions<S> {
  readonly limits: Readonly<SessionLimits>
  readonly #sessions = new Map<string, SessionEntry<S>>()
  /** Keys whose state expired or was evicted, with why: the session's next run is told. */
  readonly #gone = new Map<string, string>()
  readonly #options: LiveSessionsOptions<S>
  #sweeper: ReturnType<typeof setInterval> | undefined
  #closed = false

  constructor(options: LiveSessionsOptions<S>) {
    this.limits = options.limits
    this.#options = options
  }

  get size(): number {
    return this.#sessions.size
  }

  get(key: string): SessionEntry<S> | undefined {
    return this.#sessions.get(key)
  }

  has(key: string): boolean {
    return this.#sessions.has(key)
  }

  /** Whether `entry` is still the live session of its key (not let go of, ended or replaced meanwhile). */
  holds(entry: SessionEntry<S>): boolean {
    return this.#sessions.get(entry.key) === entry
  }

  values(): IterableIterator<SessionEntry<S>> {
    return this.#sessions.values()
  }

  /** Puts `entry` in, as the most recently used, and sweeps while it is live. */
  add(entry: SessionEntry<S>): void {
    this.#sessions.set(entry.key, entry)
    this.#startSweeping()
  }

  /** Moves `entry` to the most recently used end (the eviction order). */
  touch(entry: SessionEntry<S>): void {
    this.#sessions.delete(entry.key)
    this.#sessions.set(entry.key, entry)
  }

  /** Takes `key`'s entry out, dropping nothing (its state goes with whoever took it). */
  remove(key: string): void {
    this.#sessions.delete(key)
  }

  /** The least recently used session that runs nothing (other than `except`), if any. */
  leastRecentIdle(except?: SessionEntry<S>): SessionEntry<S> | undefined {
    return [...this.#sessions.values()].find((e) => !e.busy && e !== except)
  }

  /** Why no session can start: every one runs a program, or waits for a suspended one's resume. */
  allBusy(): string {
    const held = [...this.#sessions.values()].filter((e) => e.parked !== undefined).length
    return allBusy(this.limits.maxSessions, held)
  }

  /** Drops `state`, which the table lets go of. */
  drop(state: S): void {
    this.#options.drop(state)
  }

  /** Drops `entry`, telling its next run `why` (and, unless `release` is false, ends its claim). */
  forget(entry: SessionEntry<S>, why: string | undefined, release = true): void {
    if (release) this.#options.release(entry)
    this.#sessions.delete(entry.key)
    if (entry.state !== undefined) this.#options.drop(entry.state)
    entry.state = undefined
    if (why !== undefined) this.remember(entry.key, why)
  }

  /**
   * A run that could not take `entry` (the store did not answer): an entry that holds a state (handed over by a
   * save that failed, see `Saves.letGo`) stays, idle, for the sweeps to save; one without is dropped.
   */
  giveUp(entry: SessionEntry<S>): void {
    if (entry.state === undefined) return this.forget(entry, undefined)
    entry.busy = false
  }

  /** Why `key`'s state is gone, for its next run. Bounded: only the most recent reasons are remembered. */
  remember(key: string, why: string): void {
    keepRecent(this.#gone, key, why, this.limits.maxSessions)
  }

  /** Why `key`'s state went, told once: it is forgotten here. */
  takeGone(key: string): string | undefined {
    const gone = this.#gone.get(key)
    this.#gone.delete(key)
    return gone
  }

  /** Forgets why `key`'s state went: the session starts anew (resumed into, ended). */
  clearGone(key: string): void {
    this.#gone.delete(key)
  }

  /** The sweep timer stops once no session is live. */
  stopIfEmpty(): void {
    if (this.#sessions.size === 0) this.#stopSweeping()
  }

  /** No sweep timer starts again (the runtime is being disposed). */
  close(): void {
    this.#closed = true
  }

  /** Drops every session, and why the gone ones went. */
  clear(): void {
    for (const entry of [...this.#sessions.values()]) this.forget(entry, undefined)
    this.#gone.clear()
    this.#stopSweeping()
  }

  #startSweeping(): void {
    if (this.#sweeper !== undefined || this.#closed) return
    this.#sweeper = setInterval(this.#options.sweep, this.#options.sweepEveryMs)
    this.#sweeper.unref()
  }

  #stopSweeping(): void {
    clearInterval(this.#sweeper)
    this.#sweeper = undefined
  }
}

/** Sets `key` in `map` as its most recent entry; past 4 x `maxSessions` entries, the oldest goes. */
export function keepRecent<T>(map: Map<string, T>, key: string, value: T, maxSessions: number): void {
  map.delete(key)
  map.set(key, value)
  if (map.size > 4 * maxSessions) map.delete(map.keys().next().value as string)
}
