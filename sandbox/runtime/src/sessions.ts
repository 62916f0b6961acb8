import { SandboxUsageError } from './errors.js'
import type { CodeRunSessionInfo, SessionLimits } from './types.js'

/** Default `SessionLimits`: 30 minutes idle, 64 sessions, 64 MiB of state each. */
export const DEFAULT_SESSION_LIMITS: Readonly<SessionLimits> = Object.freeze({
  idleTtlMs: 30 * 60_000,
  maxSessions: 64,
  maxSessionBytes: 64 * 1024 * 1024,
})

/** Merges session limits over the defaults; a limit that is not a positive number is misuse. */
export function resolveSessionLimits(limits: Partial<SessionLimits> | undefined): SessionLimits {
  const out: SessionLimits = { ...DEFAULT_SESSION_LIMITS }
  for (const [key, value] of Object.entries(limits ?? {})) {
    if (!(key in DEFAULT_SESSION_LIMITS)) throw new SandboxUsageError(`unknown session limit "${key}"`)
    if (value === undefined) continue
    if (typeof value !== 'number' || !(value > 0) || !Number.isFinite(value)) {
      throw new SandboxUsageError(`session limit "${key}" must be a positive finite number`)
    }
    out[key as keyof SessionLimits] = value
  }
  return out
}

/** One session of a `SessionTable`: its state between runs. */
export interface SessionEntry<S> {
  readonly key: string
  state: S | undefined
  /** Bytes `state` holds. */
  bytes: number
  runs: number
  /** A run holds the session. */
  busy: boolean
  /** `endSession` came during a run: that run's state is not kept. */
  ended: boolean
  lastUsed: number
}

/** A session taken for one run (`SessionTable.take`), or why it cannot run now. */
export type SessionTurn<S> =
  | { ok: true; entry: SessionEntry<S>; fresh: boolean; note?: string }
  | { ok: false; message: string }

/**
 * A backend's sandbox sessions, whatever their state is (a QuickJS memory diff, a live isolate): one
 * run at a time per session, an idle TTL (checked on use and by an unreferenced sweep timer), a cap
 * on live sessions (a new one drops the least recently used idle one), and a byte budget per session.
 */
export class SessionTable<S> {
  readonly limits: Readonly<SessionLimits>
  readonly #sessions = new Map<string, SessionEntry<S>>()
  /** Keys whose state expired or was evicted, with why: the session's next run is told. */
  readonly #gone = new Map<string, string>()
  readonly #drop: (state: S) => void
  #sweeper: ReturnType<typeof setInterval> | undefined

  /** `drop` releases a state the table lets go of (expired, evicted, ended, replaced). */
  constructor(limits: Readonly<SessionLimits>, drop: (state: S) => void = () => undefined) {
    this.limits = limits
    this.#drop = drop
  }

  get size(): number {
    return this.#sessions.size
  }

  /** Takes `key`'s session for a run, creating it when new (or refuses: busy, or every session busy at the cap). */
  take(key: string, now = Date.now()): SessionTurn<S> {
    this.sweep(now)
    let entry = this.#sessions.get(key)
    if (entry?.busy === true) return { ok: false, message: `session "${key}" is running another program; a session runs one program at a time` }
    if (entry !== undefined) {
      entry.busy = true
      entry.lastUsed = now
      // Most recently used last (the eviction order).
      this.#sessions.delete(key)
      this.#sessions.set(key, entry)
      return { ok: true, entry, fresh: entry.state === undefined }
    }
    if (this.#sessions.size >= this.limits.maxSessions) {
      const idle = [...this.#sessions.values()].find((e) => !e.busy)
      if (idle === undefined) return { ok: false, message: `all ${this.limits.maxSessions} sessions are running programs (maxSessions)` }
      this.#forget(idle, `it was the least recently used of ${this.limits.maxSessions} sessions (maxSessions) when a new one started`)
    }
    entry = { key, state: undefined, bytes: 0, runs: 0, busy: true, ended: false, lastUsed: now }
    this.#sessions.set(key, entry)
    this.#startSweeping()
    const gone = this.#gone.get(key)
    this.#gone.delete(key)
    return gone === undefined ? { ok: true, entry, fresh: true } : { ok: true, entry, fresh: true, note: `the session's earlier state was dropped: ${gone}` }
  }

  /**
   * Gives the session back after its run: `state` (with its size) becomes the session's when given
   * and within the budget; otherwise the session keeps the state it had. Returns what the run's
   * result says about the session.
   */
  give(entry: SessionEntry<S>, left: { state: S; bytes: number } | { reason: string }, fresh: boolean, note?: string): CodeRunSessionInfo {
    entry.busy = false
    entry.runs++
    entry.lastUsed = Date.now()
    let kept = false
    let why = note
    if (entry.ended) {
      if ('state' in left) this.#drop(left.state)
      why = 'the session was ended during the run'
    } else if ('reason' in left) {
      why = left.reason
    } else if (left.bytes > this.limits.maxSessionBytes) {
      this.#drop(left.state)
      why = `the run left ${left.bytes} bytes of state, over the session's budget of ${this.limits.maxSessionBytes} (maxSessionBytes); the session keeps its state from before the run`
    } else {
      if (entry.state !== undefined) this.#drop(entry.state)
      entry.state = left.state
      entry.bytes = left.bytes
      kept = true
    }
    const info: CodeRunSessionInfo = { key: entry.key, fresh, kept, bytes: entry.ended ? 0 : entry.bytes, runs: entry.runs, ...(why === undefined ? {} : { note: why }) }
    if (entry.ended) this.#sessions.delete(entry.key)
    return info
  }

  /** Drops `key`'s session; a run in progress finishes and its state is not kept. Whether it existed. */
  end(key: string): boolean {
    const entry = this.#sessions.get(key)
    if (entry === undefined) return false
    this.#gone.delete(key)
    if (entry.busy) entry.ended = true
    else this.#forget(entry, undefined)
    return true
  }

  /** Drops idle sessions unused for `idleTtlMs`. */
  sweep(now = Date.now()): void {
    for (const entry of this.#sessions.values()) {
      if (!entry.busy && now - entry.lastUsed >= this.limits.idleTtlMs) {
        this.#forget(entry, `it was idle for ${this.limits.idleTtlMs} ms (idleTtlMs)`)
      }
    }
    if (this.#sessions.size === 0) this.#stopSweeping()
  }

  /** Drops every session. */
  clear(): void {
    for (const entry of [...this.#sessions.values()]) this.#forget(entry, undefined)
    this.#gone.clear()
    this.#stopSweeping()
  }

  #forget(entry: SessionEntry<S>, why: string | undefined): void {
    this.#sessions.delete(entry.key)
    if (entry.state !== undefined) this.#drop(entry.state)
    entry.state = undefined
    if (why !== undefined) {
      this.#gone.set(entry.key, why)
      // Bounded: only the most recent reasons are remembered.
      if (this.#gone.size > 4 * this.limits.maxSessions) this.#gone.delete(this.#gone.keys().next().value as string)
    }
  }

  #startSweeping(): void {
    if (this.#sweeper !== undefined) return
    this.#sweeper = setInterval(() => this.sweep(), Math.min(60_000, Math.max(1_000, this.limits.idleTtlMs / 2)))
    this.#sweeper.unref()
  }

  #stopSweeping(): void {
    clearInterval(this.#sweeper)
    this.#sweeper = undefined
  }
}
