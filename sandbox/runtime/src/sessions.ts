import { SandboxUsageError } from './errors.js'
import { SessionStoreError } from './session/errors.js'
import { STORE_WAIT_MS, waitForStore } from './session/store.js'
import { messageOf } from './settle.js'
import type { CodeRunSessionInfo } from './types.js'

/**
 * The most characters of a store's error message a session note quotes: the note reaches the model's text,
 * and a store (a client library, a network filesystem) may put anything in its messages.
 */
const NOTE_ERROR_CHARS = 300

/** A store's failure as a session note quotes it: its message, cut to `NOTE_ERROR_CHARS`. */
function brief(error: unknown): string {
  const message = messageOf(error)
  if (message.length <= NOTE_ERROR_CHARS) return message
  // Not half a surrogate pair; and a copy, not a slice: the note is kept (for the session's next run), the whole message must not be.
  const head = message.slice(0, NOTE_ERROR_CHARS).replace(/[\uD800-\uDBFF]$/, '')
  return `${head.split('').join('')}… (${message.length} characters)`
}

/** How a runtime bounds its sandbox sessions. Defaults: `DEFAULT_SESSION_LIMITS`. */
export interface SessionLimits {
  /** A session unused this long is dropped. */
  idleTtlMs: number
  /**
   * Live sessions at most; a new one beyond it drops the least recently used idle one. With a spill (a
   * store), also the most saves to it in progress at once: past that, a new session waits for one of them
   * to end (within its run's wall) and idle sessions stay live, so a slow store cannot make the host hold
   * the state of every session it let go of.
   */
  maxSessions: number
  /** The most state one session may keep; a run that leaves more does not keep it. */
  maxSessionBytes: number
}


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

/**
 * Where a `SessionTable` puts the sessions it lets go of instead of dropping them (a `SessionStore`
 * behind sealed snapshots): idle ones past `suspendAfterMs` and the least recently used at the cap.
 * A session that is not live is looked for here before it starts fresh.
 */
export interface SessionSpill<S> {
  save(key: string, state: S, runs: number): Promise<void>
  /** The saved session, or undefined when there is none; throws when one exists but cannot be resumed. */
  load(key: string): Promise<{ state: S; bytes: number; runs: number } | undefined>
  /** Removes the saved session; whether there was one. */
  remove(key: string): Promise<boolean>
  /** A live session idle this long is saved and leaves memory. */
  readonly suspendAfterMs: number
  /** How long `close` and `end` wait for the saves in progress or a removal. Default `STORE_WAIT_MS`. */
  readonly storeWaitMs?: number
}

/**
 * A session taken for one run (`SessionTable.take`), or why it cannot run now: busy or at the cap (no
 * `reason`), or the spill's store did not answer before the run's deadline (`wall`) or signal (`abort`).
 */
export type SessionTurn<S> =
  | { ok: true; entry: SessionEntry<S>; fresh: boolean; note?: string }
  | { ok: false; message: string; reason?: 'wall' | 'abort' }

/** What bounds `SessionTable.take`'s wait for the spill: the run's wall deadline (a `performance.now()` time) and signal. */
export interface SessionWait {
  readonly deadline: number
  readonly signal?: AbortSignal | undefined
}

/**
 * A backend's sandbox sessions, whatever their state is (a QuickJS memory diff, a live isolate): one
 * run at a time per session, an idle TTL (checked on use and by an unreferenced sweep timer), a cap
 * on live sessions (a new one lets the least recently used idle one go), and a byte budget per
 * session. With a `SessionSpill`, sessions let go of are saved there and resumed on their next run.
 */
export class SessionTable<S> {
  readonly limits: Readonly<SessionLimits>
  readonly #sessions = new Map<string, SessionEntry<S>>()
  /** Keys whose state expired or was evicted, with why: the session's next run is told. */
  readonly #gone = new Map<string, string>()
  readonly #drop: (state: S) => void
  readonly #spill: SessionSpill<S> | undefined
  /** Saves to the spill in progress, by key: a take of that key waits for its save before it loads. */
  readonly #saving = new Map<string, Promise<void>>()
  /** Every save in progress (a key may have two: saved, resumed and let go of again): at most `maxSessions` but at `close()`. */
  readonly #inFlight = new Set<Promise<void>>()
  #sweeper: ReturnType<typeof setInterval> | undefined

  /**
   * `drop` releases a state the table lets go of (expired, evicted, ended, replaced); `spill`, when
   * given, keeps the sessions the table lets go of while idle.
   */
  constructor(limits: Readonly<SessionLimits>, drop: (state: S) => void = () => undefined, spill?: SessionSpill<S>) {
    this.limits = limits
    this.#drop = drop
    this.#spill = spill
  }

  get size(): number {
    return this.#sessions.size
  }

  /**
   * Takes `key`'s session for a run, creating it when new (or refuses: busy, or every session busy at the
   * cap). A session that is not live is resumed from the spill when it is there; `wait` bounds how long
   * that may take (the session is then not taken, and its saved state stays where it is).
   */
  async take(key: string, now = Date.now(), wait?: SessionWait): Promise<SessionTurn<S>> {
    const since = performance.now()
    for (;;) {
      this.sweep(now)
      const live = this.#sessions.get(key)
      if (live?.busy === true) return { ok: false, message: `session "${key}" is running another program; a session runs one program at a time` }
      if (live !== undefined) {
        live.busy = true
        live.lastUsed = now
        // Most recently used last (the eviction order).
        this.#sessions.delete(key)
        this.#sessions.set(key, live)
        return { ok: true, entry: live, fresh: live.state === undefined }
      }
      if (this.#sessions.size < this.limits.maxSessions) break
      const idle = [...this.#sessions.values()].find((e) => !e.busy)
      if (idle === undefined) return { ok: false, message: `all ${this.limits.maxSessions} sessions are running programs (maxSessions)` }
      if (this.#savesFull(idle)) {
        // Letting the idle one go now would hold one more state until the store takes it: wait for room.
        const room = await waitForStore(Promise.race(this.#inFlight), wait ?? {})
        if (!room.ok) return { ok: false, reason: room.reason, message: `${this.#behind()} after ${Math.round(performance.now() - since)} ms: session "${key}" could not start` }
        now = Date.now()
        continue
      }
      this.#letGo(idle, `it was the least recently used of ${this.limits.maxSessions} sessions (maxSessions) when a new one started`)
      break
    }
    const entry: SessionEntry<S> = { key, state: undefined, bytes: 0, runs: 0, busy: true, ended: false, lastUsed: now }
    this.#sessions.set(key, entry)
    this.#startSweeping()
    const gone = this.#gone.get(key)
    this.#gone.delete(key)
    let note = gone === undefined ? undefined : `the session's earlier state was dropped: ${gone}`
    const spill = this.#spill
    if (spill !== undefined) {
      const loading = performance.now()
      try {
        const loaded = await waitForStore(this.#afterSave(key, () => spill.load(key)), wait ?? {})
        if (!loaded.ok) {
          if (this.#sessions.get(key) === entry) this.#forget(entry, undefined)
          return { ok: false, reason: loaded.reason, message: `the session store had not answered for session "${key}" after ${Math.round(performance.now() - loading)} ms` }
        }
        const saved = loaded.value
        if (saved !== undefined && !entry.ended) {
          entry.state = saved.state
          entry.bytes = saved.bytes
          entry.runs = saved.runs
          return { ok: true, entry, fresh: false }
        }
      } catch (error) {
        note = `the session's saved state could not be resumed (${brief(error)}); it starts fresh`
      }
    }
    return note === undefined ? { ok: true, entry, fresh: true } : { ok: true, entry, fresh: true, note }
  }

  /** Takes an idle live session out of the table (to suspend it): its state and runs, or undefined when there is none. Throws while it runs. */
  detach(key: string): { state: S; bytes: number; runs: number } | undefined {
    const entry = this.#sessions.get(key)
    if (entry === undefined) return undefined
    if (entry.busy) throw new SandboxUsageError(`session "${key}" is running a program: suspend it once the program has ended`)
    this.#sessions.delete(key)
    if (this.#sessions.size === 0) this.#stopSweeping()
    return entry.state === undefined ? undefined : { state: entry.state, bytes: entry.bytes, runs: entry.runs }
  }

  /**
   * Puts a resumed session in the table, replacing an idle live one of that key. Throws while that one runs,
   * and `SessionStoreError` (`unavailable`) when room for it needs a save and the store has not taken one of
   * the `maxSessions` in progress within the spill's `storeWaitMs`; the table is then unchanged.
   */
  async attach(key: string, state: S, bytes: number, runs: number): Promise<void> {
    const since = performance.now()
    for (;;) {
      const live = this.#sessions.get(key)
      if (live?.busy === true) throw new SandboxUsageError(`session "${key}" is running a program: resume into it once the program has ended`)
      const others = this.#sessions.size - (live === undefined ? 0 : 1)
      if (others < this.limits.maxSessions) {
        if (live !== undefined) this.#forget(live, undefined)
        break
      }
      const idle = [...this.#sessions.values()].find((e) => !e.busy && e !== live)
      if (idle === undefined) throw new SandboxUsageError(`all ${this.limits.maxSessions} sessions are running programs (maxSessions)`)
      if (this.#savesFull(idle)) {
        const waitMs = this.#spill?.storeWaitMs ?? STORE_WAIT_MS
        const room = await waitForStore(Promise.race(this.#inFlight), { deadline: since + waitMs })
        if (!room.ok) throw new SessionStoreError('unavailable', `${this.#behind()} after ${waitMs} ms: session "${key}" was not resumed`)
        continue
      }
      if (live !== undefined) this.#forget(live, undefined)
      this.#letGo(idle, `it was the least recently used of ${this.limits.maxSessions} sessions (maxSessions) when another was resumed`)
      break
    }
    this.#gone.delete(key)
    this.#sessions.set(key, { key, state, bytes, runs, busy: false, ended: false, lastUsed: Date.now() })
    this.#startSweeping()
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

  /**
   * Drops `key`'s session, live or saved; a run in progress finishes and its state is not kept.
   * Whether it existed (live, or saved in the spill).
   */
  async end(key: string): Promise<boolean> {
    const entry = this.#sessions.get(key)
    this.#gone.delete(key)
    if (entry?.busy === true) entry.ended = true
    else if (entry !== undefined) this.#forget(entry, undefined)
    let saved = false
    const spill = this.#spill
    if (spill !== undefined) {
      const removed = await waitForStore(this.#afterSave(key, () => spill.remove(key)), { deadline: performance.now() + (spill.storeWaitMs ?? STORE_WAIT_MS) })
      if (!removed.ok) throw new SessionStoreError('unavailable', `the session store did not answer within ${spill.storeWaitMs ?? STORE_WAIT_MS} ms: session "${key}" may still be saved there`)
      saved = removed.value
    }
    return entry !== undefined || saved
  }

  /** Drops idle sessions unused for `idleTtlMs`; with a spill, saves those idle for `suspendAfterMs`. */
  sweep(now = Date.now()): void {
    for (const entry of this.#sessions.values()) {
      if (entry.busy) continue
      const idle = now - entry.lastUsed
      if (idle >= this.limits.idleTtlMs) this.#forget(entry, `it was idle for ${this.limits.idleTtlMs} ms (idleTtlMs)`)
      // At the cap of saves in progress it stays live (and counts as live) until the store catches up.
      else if (this.#spill !== undefined && idle >= this.#spill.suspendAfterMs && !this.#savesFull(entry)) this.#letGo(entry, 'it was idle')
    }
    if (this.#sessions.size === 0) this.#stopSweeping()
  }

  /** Saves in progress (a caller that must not lose them, e.g. at shutdown, waits for these). */
  async settled(): Promise<void> {
    await Promise.all([...this.#inFlight])
  }

  /** `operation` on the spill once the save of `key` in progress, if any, has ended. */
  async #afterSave<T>(key: string, operation: () => Promise<T>): Promise<T> {
    await this.#saving.get(key)
    return operation()
  }

  /** An idle session leaves memory: saved to the spill when there is one, else dropped. */
  #letGo(entry: SessionEntry<S>, why: string): void {
    const spill = this.#spill
    const state = entry.state
    if (spill === undefined || state === undefined) return this.#forget(entry, why)
    this.#sessions.delete(entry.key)
    entry.state = undefined
    const key = entry.key
    const saving = spill.save(key, state, entry.runs).then(
      () => this.#drop(state),
      (error: unknown) => {
        this.#drop(state)
        this.#remember(key, `${why}, and saving it failed: ${brief(error)}`)
      },
    )
    const done = saving.finally(() => {
      if (this.#saving.get(key) === done) this.#saving.delete(key)
      this.#inFlight.delete(done)
    })
    this.#saving.set(key, done)
    this.#inFlight.add(done)
  }

  /** Letting `entry` go would start a save, and `maxSessions` saves are in progress already. */
  #savesFull(entry: SessionEntry<S>): boolean {
    return this.#spill !== undefined && entry.state !== undefined && this.#inFlight.size >= this.limits.maxSessions
  }

  /** Why a session waits for room: the saves in progress. */
  #behind(): string {
    const n = this.#inFlight.size
    return `the session store was still saving ${n} session${n === 1 ? '' : 's'} (at most maxSessions = ${this.limits.maxSessions} saves wait at once)`
  }

  /**
   * Saves every idle session to the spill (none: drops them), waits for the saves (at most the spill's
   * `storeWaitMs`: a save the store has not confirmed by then is given up), and drops the rest.
   */
  async close(): Promise<void> {
    for (const entry of [...this.#sessions.values()]) if (!entry.busy) this.#letGo(entry, 'the runtime was disposed')
    await waitForStore(this.settled(), { deadline: performance.now() + (this.#spill?.storeWaitMs ?? STORE_WAIT_MS) })
    this.clear()
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
    if (why !== undefined) this.#remember(entry.key, why)
  }

  /** Why `key`'s state is gone, for its next run. Bounded: only the most recent reasons are remembered. */
  #remember(key: string, why: string): void {
    this.#gone.delete(key)
    this.#gone.set(key, why)
    if (this.#gone.size > 4 * this.limits.maxSessions) this.#gone.delete(this.#gone.keys().next().value as string)
  }

  #startSweeping(): void {
    if (this.#sweeper !== undefined) return
    const every = Math.min(this.limits.idleTtlMs, this.#spill?.suspendAfterMs ?? Infinity) / 2
    this.#sweeper = setInterval(() => this.sweep(), Math.max(50, Math.min(60_000, every)))
    this.#sweeper.unref()
  }

  #stopSweeping(): void {
    clearInterval(this.#sweeper)
    this.#sweeper = undefined
  }
}

