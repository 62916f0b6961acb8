import { createHash } from 'node:crypto'
import { SandboxUsageError } from './errors.js'
import { SessionStoreError, SnapshotError } from './session/errors.js'
import { STORE_WAIT_MS, waitForStore, type SessionClaim } from './session/store.js'
import { messageOf } from './settle.js'
import type { CodeRunSessionInfo } from './types.js'

/**
 * The most characters of a store's error message a session note quotes: the note reaches the model's text,
 * and a store (a client library, a network filesystem) may put anything in its messages.
 */
const NOTE_ERROR_CHARS = 400
/**
 * Of which the head; the rest is the message's tail, long enough for a file store's "moved aside to" and its path
 * (about 190 characters under a 40-character directory).
 */
const NOTE_ERROR_HEAD = 150

/** A store's failure as a session note quotes it: its message, cut to `NOTE_ERROR_CHARS`. */
function brief(error: unknown): string {
  const message = messageOf(error)
  if (message.length <= NOTE_ERROR_CHARS) return message
  // The head and the tail, where a message says what to do (a file store's corrupt entry: where it was moved aside).
  // Not half a surrogate pair; and copies, not slices: the note is kept (for the session's next run), the whole message must not be.
  const head = message.slice(0, NOTE_ERROR_HEAD).replace(/[\uD800-\uDBFF]$/, '')
  const tail = message.slice(message.length - (NOTE_ERROR_CHARS - NOTE_ERROR_HEAD)).replace(/^[\uDC00-\uDFFF]/, '')
  return `${head.split('').join('')}… (${message.length} characters) …${tail.split('').join('')}`
}

/** Why a session cannot be resumed into now: a program of it runs, or it is being suspended. */
function busyForResume(key: string, live: { suspending?: boolean }): SandboxUsageError {
  return new SandboxUsageError(
    live.suspending === true
      ? `session "${key}" is being suspended: resume into it once that has ended`
      : `session "${key}" is running a program: resume into it once the program has ended`,
  )
}

/** How long a session run that suspended holds its session for its resume, by default (`DurableRun.holdMs`): 7 days. */
export const DEFAULT_HOLD_MS = 7 * 24 * 3_600_000

/** Claim holders that hold a session for the resume of a program of it that suspended (`parkedHolder`). */
const PARKED_HOLDER_PREFIX = 'parked:'

/**
 * The claim holder that holds a session for the resume of its run that suspended under durable key `key`
 * (`SessionTable.park`): the same in every process, so that the process that resumes the run takes it over.
 */
export function parkedHolder(key: string): string {
  return PARKED_HOLDER_PREFIX + createHash('sha256').update(key).digest('hex').slice(0, 40)
}

/** `claim` holds a session for the resume of a program of it that suspended (`parkedHolder`). */
function parked(claim: SessionClaim): boolean {
  return claim.holder.startsWith(PARKED_HOLDER_PREFIX)
}

/** Why a session whose program suspended runs no other program now (`SessionTable.park`). */
function parkedMessage(key: string, leftMs: number): string {
  return `session "${key}" waits for the resume of a program of it that suspended (durable approval): it runs no other program until then, or until that program's hold on it ends in ${Math.max(1, Math.ceil(leftMs / 1000))} s (the session then goes on from its state before that program)`
}

/** Why a session's state from elsewhere (bytes, a store) is not taken: over this runtime's budget. */
function overBudget(key: string, bytes: number, max: number): SnapshotError {
  return new SnapshotError(
    'too-large',
    `session "${key}" holds ${bytes} bytes of state, over this runtime's budget of ${max} per session (maxSessionBytes): ` +
      'raise sessions.maxSessionBytes to take it',
  )
}

/** Why a resumed run's state does not become its session's: the session went on without it. */
function wentOn(key: string, other?: SessionClaim): string {
  const held =
    other === undefined
      ? ''
      : `; another process sharing the session store holds it now (its claim runs out in ${Math.ceil(other.expiresInMs / 1000)} s)`
  return `session "${key}" went on without this program (its hold on the session for this resume had ended${held}): the program went on, and the state it leaves is not the session's`
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

/** How long a session's claim lasts past its run, by default (`SessionSpill.claimMs`). */
export const CLAIM_MS = 30_000

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
  /** Until when (epoch ms) this process's claim on the session in the spill's store holds; 0 for none. */
  claimedUntil: number
  /** Why the claim was lost to another process (a renewal found it held): the session's next run is refused and it is dropped. */
  claimLost?: string
  /** A renewal of the claim in progress. */
  renewing?: Promise<string | undefined> | undefined
  /** `suspendSession` is taking it out (the entry is busy meanwhile, running nothing). */
  suspending?: boolean
  /**
   * A run of the session suspended (durable approval) and holds it (the entry stays busy) for its resume by
   * `holder` until `until` (epoch ms); then the session goes on from `state`, its state before that run.
   */
  parked?: { holder: string; until: number } | undefined
  /** What the session's next run is told (its state went back to before a suspended run that was not resumed). */
  note?: string | undefined
  /**
   * Taken for a resume without its state (`take` with `resumes`: the resumed run's memory holds it; the state
   * from before that run is in the spill's store): a resume that leaves no state lets the entry go unsaved.
   */
  bare?: boolean | undefined
  /** Its last idle save failed, when (epoch ms) and why: the sweeps try again `suspendAfterMs` later (see `#letGo`). */
  saveFailed?: { at: number; why: string } | undefined
}

/**
 * Where a `SessionTable` puts the sessions it lets go of instead of dropping them (a `SessionStore`
 * behind sealed snapshots): idle ones past `suspendAfterMs` and the least recently used at the cap.
 * A session that is not live is looked for here before it starts fresh.
 */
export interface SessionSpill<S> {
  save(key: string, state: S, runs: number): Promise<void>
  /**
   * The saved session, or undefined when there is none; throws when one exists but cannot be resumed (the
   * session then starts fresh, with a note), or `SessionStoreError` `unavailable` when the store could not be
   * read (the run is refused: starting fresh would later save over the state the store still has).
   */
  load(key: string): Promise<{ state: S; bytes: number; runs: number } | undefined>
  /** Removes the saved session; whether there was one. */
  remove(key: string): Promise<boolean>
  /**
   * Claims `key` for this process for `ttlMs` or renews its claim: `undefined` when this process holds it,
   * else the claim of another process sharing the store (which holds the session live). Without it, nothing
   * keeps two processes from running one session at once (each on its own copy).
   */
  claim?(key: string, ttlMs: number, replaces?: string): Promise<SessionClaim | undefined>
  /** Ends this process's claim on `key`, if it holds one. */
  release?(key: string): Promise<void>
  /**
   * Gives this process's claim on `key` (or the free key) to `holder` for `ttlMs`: a session whose run suspended
   * (`SessionTable.park`) stays held for that run's resume, which claims it with `replaces: holder`.
   */
  hand?(key: string, holder: string, ttlMs: number): Promise<SessionClaim | undefined>
  /** Ends `holder`'s claim on `key` (one `hand` gave), if it holds it. */
  unhand?(key: string, holder: string): Promise<void>
  /**
   * How long a claim lasts past the run that takes it (default `CLAIM_MS`): the table renews its claims on
   * sessions it holds (running or idle) when half of this is left, so a process that dies without letting
   * its sessions go blocks them for about this long.
   */
  readonly claimMs?: number
  /** A live session idle this long is saved and leaves memory. */
  readonly suspendAfterMs: number
  /** How long `close` and `end` wait for the saves in progress or a removal. Default `STORE_WAIT_MS`. */
  readonly storeWaitMs?: number
}

/**
 * A session taken for one run (`SessionTable.take`), or why it cannot run now: busy, held or at the cap (no
 * `reason`), the spill's store did not answer before the run's deadline (`wall`) or signal (`abort`), or it
 * failed to claim the session (`store`).
 */
export type SessionTurn<S> =
  | { ok: true; entry: SessionEntry<S>; fresh: boolean; note?: string }
  | { ok: false; message: string; reason?: 'wall' | 'abort' | 'store' }

/** What bounds `SessionTable.take`'s wait for the spill: the run's wall deadline (a `performance.now()` time) and signal. */
export interface SessionWait {
  readonly deadline: number
  readonly signal?: AbortSignal | undefined
}

/** Whether `spill` claims sessions in its store and can hand a claim over: where `park` holds a session for a resume. */
function holdsInStore<S>(
  spill: SessionSpill<S> | undefined,
): spill is SessionSpill<S> & Required<Pick<SessionSpill<S>, 'hand' | 'claim'>> {
  return spill?.hand !== undefined && spill.claim !== undefined
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
  /**
   * Keys this table saved to the spill, and when (epoch ms), until their next load or end: a load that finds nothing
   * for one tells the run that the store lost the state (expired there, evicted, flushed). Bounded as `#gone`.
   */
  readonly #savedHere = new Map<string, number>()
  /**
   * The idle saves in progress that may give their state back if they fail (`#letGo`), by key: `end`, `detach`,
   * `attach` and `close` cancel them (the state then goes as it did: the caller was told there was none here).
   */
  readonly #retrying = new Map<string, { cancelled: boolean }>()
  /** Suspends in progress (`detach`): `close` lets them end first, then saves what they left. */
  readonly #detaching = new Set<Promise<unknown>>()
  #closed = false
  readonly #drop: (state: S) => void
  readonly #spill: SessionSpill<S> | undefined
  /**
   * The last operation on the spill's store of each key (a save and its release, a claim, a load, a
   * removal): the next one of that key starts once it has ended, so a release never lands after a new claim.
   */
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

  /**
   * Whether this table's spill claims sessions in its store (file, Redis): a session run that suspends is held
   * there (`park`), so only a table of a runtime sharing that store can give its resume the session.
   */
  get holdsInStore(): boolean {
    return holdsInStore(this.#spill)
  }

  get size(): number {
    return this.#sessions.size
  }

  /**
   * Takes `key`'s session for a run, creating it when new (or refuses: busy, or every session busy at the
   * cap). A session that is not live is resumed from the spill when it is there; `wait` bounds how long
   * that may take (the session is then not taken, and its saved state stays where it is). `resumes`: the
   * turn is for the resume of a run that suspended in this session (`park`, its `holder`): it takes the
   * session that run holds, here or from another process (claimed from `holder`), and loads nothing (the
   * run's state holds the session's); refused when the session went on without it (its hold ended).
   */
  async take(key: string, now = Date.now(), wait?: SessionWait, resumes?: string): Promise<SessionTurn<S>> {
    const since = performance.now()
    for (;;) {
      this.sweep(now)
      const live = this.#sessions.get(key)
      if (live?.parked !== undefined) {
        if (live.parked.holder !== resumes)
          return { ok: false, message: `${parkedMessage(key, live.parked.until - now)}: this program did not run` }
        live.parked = undefined
        live.lastUsed = now
        return { ok: true, entry: live, fresh: false }
      }
      if (resumes !== undefined && live?.busy === true && live.claimedUntil === 0 && this.#spill?.claim !== undefined) {
        // Another program of this process is claiming the session (the hold refuses it, unless the session went on):
        // the store's answer says which. Looked at again shortly.
        if (performance.now() >= (wait?.deadline ?? Infinity))
          return {
            ok: false,
            reason: 'wall',
            message: `session "${key}" was being claimed for another program here until the run's wall`,
          }
        if (wait?.signal?.aborted === true)
          return { ok: false, reason: 'abort', message: `session "${key}" was being claimed for another program here` }
        await new Promise((resolve) => setTimeout(resolve, 2))
        now = Date.now()
        continue
      }
      if (resumes !== undefined && live !== undefined) return { ok: false, message: wentOn(key) }
      if (live?.busy === true)
        return {
          ok: false,
          message:
            live.suspending === true
              ? `session "${key}" is being suspended (suspendSession): this program did not run`
              : `session "${key}" is running another program; a session runs one program at a time`,
        }
      if (live !== undefined) {
        if (live.claimLost !== undefined || !this.#claimCovers(live, wait)) {
          // Its claim is lost, or would run out before this run could end: renewed first (or the session is dropped).
          let refused = live.claimLost
          if (refused === undefined) {
            const renewing = performance.now()
            const renewed = await waitForStore(this.#renew(live, wait), wait ?? {})
            if (!renewed.ok)
              return {
                ok: false,
                reason: renewed.reason,
                message: `the session store had not answered the renewal of this process's claim on session "${key}" after ${Math.round(performance.now() - renewing)} ms`,
              }
            refused = renewed.value
          }
          if (refused !== undefined) {
            // Held by another process now: this one's copy goes. (A store that failed keeps it, for a later try.)
            if (live.claimLost !== undefined && this.#sessions.get(key) === live && !live.busy)
              this.#forget(live, undefined, false)
            return { ok: false, message: refused }
          }
          if (this.#sessions.get(key) !== live || live.busy) {
            // Let go of or taken while it was renewed: looked at again.
            now = Date.now()
            continue
          }
        }
        live.busy = true
        live.lastUsed = now
        // Most recently used last (the eviction order).
        this.#sessions.delete(key)
        this.#sessions.set(key, live)
        const note = live.note
        live.note = undefined
        return note === undefined
          ? { ok: true, entry: live, fresh: live.state === undefined }
          : { ok: true, entry: live, fresh: live.state === undefined, note }
      }
      if (this.#sessions.size < this.limits.maxSessions) break
      const idle = [...this.#sessions.values()].find((e) => !e.busy)
      // A resumed program's session was admitted when the program started: it goes over the cap rather than lose its state.
      if (idle === undefined && resumes !== undefined) break
      if (idle === undefined) return { ok: false, message: this.#allBusy() }
      if (this.#savesFull(idle)) {
        // Letting the idle one go now would hold one more state until the store takes it: wait for room.
        const room = await waitForStore(Promise.race(this.#inFlight), wait ?? {})
        if (!room.ok)
          return {
            ok: false,
            reason: room.reason,
            message: `${this.#behind()} after ${Math.round(performance.now() - since)} ms: session "${key}" could not start`,
          }
        now = Date.now()
        continue
      }
      this.#letGo(
        idle,
        `it was the least recently used of ${this.limits.maxSessions} sessions (maxSessions) when a new one started`,
      )
      break
    }
    const entry: SessionEntry<S> = {
      key,
      state: undefined,
      bytes: 0,
      runs: 0,
      busy: true,
      ended: false,
      lastUsed: now,
      claimedUntil: 0,
    }
    this.#sessions.set(key, entry)
    this.#startSweeping()
    const spill = this.#spill
    if (spill?.claim !== undefined) {
      const claiming = performance.now()
      let refused: string | undefined
      let failed = false
      try {
        const claimed = await waitForStore(
          this.#serial(key, () => this.#claim(entry, wait, resumes)),
          wait ?? {},
        )
        if (!claimed.ok) {
          if (this.#sessions.get(key) === entry) this.#giveUp(entry)
          this.#releaseLate(key)
          return {
            ok: false,
            reason: claimed.reason,
            message: `the session store had not answered the claim of session "${key}" after ${Math.round(performance.now() - claiming)} ms`,
          }
        }
        if (claimed.value !== undefined) {
          refused =
            resumes !== undefined
              ? wentOn(key, claimed.value)
              : parked(claimed.value)
                ? this.#heldElsewhere(key, claimed.value, 'this program did not run')
                : this.#heldElsewhere(
                    key,
                    claimed.value,
                    "this program did not run, and the session's state is unchanged: send a session's programs to one process at a time, or retry later",
                  )
        }
      } catch (error) {
        failed = true
        refused = `the session store failed to claim session "${key}" for this process (${brief(error)}); the program did not run, and the session's saved state is as it was`
      }
      if (refused !== undefined) {
        // Held by another process, what this one kept goes: that process's saves are the session's.
        if (this.#sessions.get(key) === entry) {
          if (failed) this.#giveUp(entry)
          else this.#forget(entry, undefined)
        }
        if (failed) this.#releaseLate(key)
        return failed ? { ok: false, reason: 'store', message: refused } : { ok: false, message: refused }
      }
    }
    // The resumed run's state holds the session's: nothing to load (the store keeps its state from before that run).
    if (resumes !== undefined) {
      entry.bare = true
      return { ok: true, entry, fresh: false }
    }
    // The session's idle state, whose save failed while this run waited for it, was handed to this run (`#letGo`).
    if (entry.state !== undefined) return { ok: true, entry, fresh: false }
    const gone = this.#gone.get(key)
    this.#gone.delete(key)
    let note = gone === undefined ? undefined : `the session's earlier state was dropped: ${gone}`
    if (spill !== undefined) {
      const loading = performance.now()
      try {
        const loaded = await waitForStore(
          this.#serial(key, () => (entry.state !== undefined ? Promise.resolve(undefined) : spill.load(key))),
          wait ?? {},
        )
        if (!loaded.ok) {
          if (this.#sessions.get(key) === entry) this.#giveUp(entry)
          return {
            ok: false,
            reason: loaded.reason,
            message: `the session store had not answered for session "${key}" after ${Math.round(performance.now() - loading)} ms`,
          }
        }
        if (entry.state !== undefined) return { ok: true, entry, fresh: false }
        const saved = loaded.value
        const savedAt = this.#savedHere.get(key)
        this.#savedHere.delete(key)
        if (saved === undefined && savedAt !== undefined) {
          note ??= `the session's state, which this process saved to the session store ${Math.round((Date.now() - savedAt) / 1000)} s ago, was not there any more (expired or removed there): it starts fresh`
        }
        if (saved !== undefined && saved.bytes > this.limits.maxSessionBytes) {
          // Saved by a runtime with a larger budget: it cannot be resumed here, as bytes that cannot be opened.
          this.#drop(saved.state)
          const why = overBudget(key, saved.bytes, this.limits.maxSessionBytes).message
          note = `the session's saved state could not be resumed (${why}); it starts fresh`
        } else if (saved !== undefined && !entry.ended) {
          entry.state = saved.state
          entry.bytes = saved.bytes
          entry.runs = saved.runs
          // What this process dropped was newer than what the store had: the run is told it goes on from that.
          if (gone !== undefined)
            return {
              ok: true,
              entry,
              fresh: false,
              note: `the session's latest state was dropped (${gone}); it goes on from the state the session store had`,
            }
          return { ok: true, entry, fresh: false }
        }
      } catch (error) {
        if (error instanceof SessionStoreError && error.code === 'unavailable') {
          if (this.#sessions.get(key) === entry) this.#forget(entry, undefined)
          if (gone !== undefined) this.#remember(key, gone)
          return {
            ok: false,
            message: `${brief(error)}; the program did not run, and the session's saved state is as it was`,
          }
        }
        note = `the session's saved state could not be resumed (${brief(error)}); it starts fresh`
      }
    }
    return note === undefined ? { ok: true, entry, fresh: true } : { ok: true, entry, fresh: true, note }
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
  async detach(key: string): Promise<{ state: S; bytes: number; runs: number } | undefined> {
    const entry = this.#sessions.get(key)
    // None live (an idle save of it may be in progress, and put it back if it fails): nothing is taken out.
    if (entry === undefined) return undefined
    // A failed idle save of an older state must not put that one back once this one is the caller's.
    this.#cancelRetry(key)
    if (entry.parked !== undefined)
      throw new SandboxUsageError(`${parkedMessage(key, entry.parked.until - Date.now())}: it cannot be suspended now`)
    if (entry.suspending === true) throw new SandboxUsageError(`session "${key}" is being suspended already`)
    if (entry.busy)
      throw new SandboxUsageError(`session "${key}" is running a program: suspend it once the program has ended`)
    if (entry.claimLost !== undefined) {
      this.#forget(entry, undefined, false)
      throw new SessionStoreError(
        'claimed',
        `session "${key}" is held by another process sharing the session store (this process's claim on it had lapsed): it was not suspended, and the state this process held was dropped`,
      )
    }
    const spill = this.#spill
    if (spill !== undefined) {
      entry.busy = true
      entry.suspending = true
      const removing = this.#removeStored(entry, spill)
      this.#detaching.add(removing)
      let outcome: Awaited<typeof removing>
      try {
        outcome = await removing
      } finally {
        this.#detaching.delete(removing)
        entry.busy = false
        entry.suspending = false
        entry.lastUsed = Date.now()
      }
      // Ended meanwhile (endSession): nothing to suspend, whatever the store did.
      if (entry.ended || this.#sessions.get(key) !== entry) {
        if (this.#sessions.get(key) === entry) this.#forget(entry, undefined)
        return undefined
      }
      if (outcome.held !== undefined) {
        entry.claimLost = outcome.held
        this.#forget(entry, undefined, false)
        throw new SessionStoreError('claimed', outcome.held)
      }
      if (outcome.failure !== undefined) {
        throw new SessionStoreError(
          'unavailable',
          `the session store ${outcome.failure} when its older copy of session "${key}" was to be removed: the session was not suspended, and stays here as it was`,
        )
      }
      this.#savedHere.delete(key)
    }
    // Whoever holds the bytes may resume it anywhere.
    this.#release(entry)
    this.#sessions.delete(key)
    if (this.#sessions.size === 0) this.#stopSweeping()
    return entry.state === undefined ? undefined : { state: entry.state, bytes: entry.bytes, runs: entry.runs }
  }

  /** `detach`'s store part: the claim renewed, then the stored copy removed; why not, when not. Never throws. */
  async #removeStored(entry: SessionEntry<S>, spill: SessionSpill<S>): Promise<{ held?: string; failure?: string }> {
    const waitMs = this.#storeWaitMs
    try {
      const done = await waitForStore(
        this.#serial(entry.key, async (): Promise<string | undefined> => {
          // For the removal's longest wait and a claim's time beyond: no other process takes the session meanwhile.
          const other = await this.#claim(entry, { deadline: performance.now() + waitMs })
          if (other !== undefined)
            return this.#heldElsewhere(
              entry.key,
              other,
              "this process's claim on it had lapsed: it was not suspended, and the state this process held was dropped",
            )
          await spill.remove(entry.key)
          return undefined
        }),
        { deadline: performance.now() + waitMs },
      )
      if (!done.ok) return { failure: `did not answer within ${waitMs} ms` }
      return done.value === undefined ? {} : { held: done.value }
    } catch (error) {
      return { failure: `failed (${brief(error)})` }
    }
  }

  /**
   * Puts a resumed session in the table, replacing an idle live one of that key. Throws `SnapshotError`
   * (`too-large`) for a state over `maxSessionBytes`, `SandboxUsageError` while that one runs, and
   * `SessionStoreError` (`unavailable`) when room for it needs a save and the store has not taken one of the
   * `maxSessions` in progress within the spill's `storeWaitMs`; the table is then unchanged.
   */
  async attach(key: string, state: S, bytes: number, runs: number): Promise<void> {
    // Before anything changes: the host's bound (maxSessions x maxSessionBytes) holds for resumed sessions too.
    if (bytes > this.limits.maxSessionBytes) throw overBudget(key, bytes, this.limits.maxSessionBytes)
    this.#cancelRetry(key)
    const since = performance.now()
    const held = this.#sessions.get(key)?.parked
    if (held !== undefined)
      throw new SessionStoreError('claimed', `${parkedMessage(key, held.until - Date.now())}: it was not resumed`)
    const entry: SessionEntry<S> = {
      key,
      state,
      bytes,
      runs,
      busy: false,
      ended: false,
      lastUsed: Date.now(),
      claimedUntil: 0,
    }
    const spill = this.#spill
    if (spill?.claim !== undefined) {
      const live = this.#sessions.get(key)
      if (live?.busy === true) throw busyForResume(key, live)
      const waitMs = this.#storeWaitMs
      const claimed = await waitForStore(
        this.#serial(key, () => this.#claim(entry, undefined)),
        { deadline: since + waitMs },
      )
      if (!claimed.ok) {
        this.#releaseLate(key)
        throw new SessionStoreError(
          'unavailable',
          `the session store did not answer the claim of session "${key}" within ${waitMs} ms: it was not resumed`,
        )
      }
      if (claimed.value !== undefined)
        throw new SessionStoreError('claimed', this.#heldElsewhere(key, claimed.value, 'it was not resumed here'))
      // The claim (this process's, renewed) is the resumed session's now.
      if (live !== undefined) live.claimedUntil = 0
    }
    try {
      await this.#makeRoomFor(key, since)
    } catch (error) {
      // The live session of that key stays: the claim is its own again.
      const live = this.#sessions.get(key)
      if (live !== undefined && live.claimedUntil === 0 && entry.claimedUntil > 0)
        live.claimedUntil = entry.claimedUntil
      else this.#release(entry)
      throw error
    }
    this.#gone.delete(key)
    this.#sessions.set(key, entry)
    this.#startSweeping()
  }

  /** Room in the table for `key` (an idle live session of that key goes; see `attach`). */
  async #makeRoomFor(key: string, since: number): Promise<void> {
    for (;;) {
      const live = this.#sessions.get(key)
      if (live?.busy === true) throw busyForResume(key, live)
      const others = this.#sessions.size - (live === undefined ? 0 : 1)
      if (others < this.limits.maxSessions) {
        if (live !== undefined) this.#forget(live, undefined)
        break
      }
      const idle = [...this.#sessions.values()].find((e) => !e.busy && e !== live)
      if (idle === undefined) throw new SandboxUsageError(this.#allBusy())
      if (this.#savesFull(idle)) {
        const waitMs = this.#storeWaitMs
        const room = await waitForStore(Promise.race(this.#inFlight), { deadline: since + waitMs })
        if (!room.ok)
          throw new SessionStoreError(
            'unavailable',
            `${this.#behind()} after ${waitMs} ms: session "${key}" was not resumed`,
          )
        continue
      }
      if (live !== undefined) this.#forget(live, undefined)
      this.#letGo(
        idle,
        `it was the least recently used of ${this.limits.maxSessions} sessions (maxSessions) when another was resumed`,
      )
      break
    }
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
    const info: CodeRunSessionInfo = {
      key: entry.key,
      fresh,
      kept,
      bytes: entry.ended ? 0 : entry.bytes,
      runs: entry.runs,
      ...(why === undefined ? {} : { note: why }),
    }
    if (entry.ended) this.#sessions.delete(entry.key)
    else if (kept) entry.bare = undefined
    // A resume that left no state: the session's state is the one its store kept from before the resumed run.
    else if (entry.bare === true && entry.state === undefined) this.#forget(entry, undefined)
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
  async park(entry: SessionEntry<S>, holder: string, holdMs: number, fresh: boolean): Promise<CodeRunSessionInfo> {
    const until = Date.now() + holdMs
    const info: CodeRunSessionInfo = {
      key: entry.key,
      fresh,
      kept: false,
      bytes: entry.bytes,
      runs: entry.runs,
      note: "the program suspended: the session waits for its resume, and runs no other program until then (its state is the program's, which the resume goes on with)",
    }
    if (entry.ended) {
      // Ended during the run: nothing is held; a resume finds the session gone (and starts it from the run's state).
      this.#forget(entry, undefined)
      return { ...info, bytes: 0, note: 'the session was ended during the run' }
    }
    const spill = this.#spill
    if (!holdsInStore(spill) || entry.claimedUntil === 0) {
      entry.parked = { holder, until }
      return info
    }
    this.#sessions.delete(entry.key)
    if (this.#sessions.size === 0) this.#stopSweeping()
    const { key, state, runs, claimedUntil } = entry
    const hand = spill.hand.bind(spill)
    entry.state = undefined
    entry.claimedUntil = 0
    const saveMs = this.#storeWaitMs
    // Saved (the state before the run, which the session goes on from if the hold ends), then held for the resume:
    // refused (another holder) or failed, the hold is not in the store.
    const handing = this.#saveThen(
      key,
      state,
      runs,
      claimedUntil,
      (error) => `its state before a program that suspended could not be saved: ${brief(error)}`,
      async () => (await hand(key, holder, holdMs).catch(() => 'failed')) === undefined,
    )
    const handed = await waitForStore(handing, { deadline: performance.now() + saveMs })
    if (handed.ok && handed.value) return info
    // Not held in the store: another process may run the session meanwhile, and this run's resume would not keep its state then.
    return {
      ...info,
      note: `${info.note}; but the session store did not confirm the hold${handed.ok ? '' : ` within ${saveMs} ms`}: another process may run the session meanwhile`,
    }
  }

  /**
   * Ends the hold of `holder` (`park`) on `key`: its suspended run will not be resumed, and the session goes on
   * from its state before that run (live here, or saved in the spill's store, whose claim `holder` had).
   */
  async unpark(key: string, holder: string): Promise<void> {
    const live = this.#sessions.get(key)
    if (live?.parked?.holder === holder) {
      live.parked = undefined
      live.busy = false
      live.lastUsed = Date.now()
      live.note =
        'a program of this session that suspended was dropped without being resumed: the session went on from its state before that program'
      return
    }
    const unhand = this.#spill?.unhand
    if (live !== undefined || unhand === undefined) return
    const waitMs = this.#storeWaitMs
    const ended = await waitForStore(
      this.#serial(key, () => unhand(key, holder)),
      { deadline: performance.now() + waitMs },
    )
    if (!ended.ok)
      throw new SessionStoreError(
        'unavailable',
        `the session store did not answer within ${waitMs} ms: session "${key}" stays held for the dropped run until its hold ends`,
      )
  }

  /**
   * Drops `key`'s session, live or saved; a run in progress finishes and its state is not kept.
   * Whether it existed (live, or saved in the spill). Throws `SessionStoreError` `claimed` when another
   * process sharing the store holds it (nothing is dropped), `unavailable` when the store does not answer.
   */
  async end(key: string): Promise<boolean> {
    this.#cancelRetry(key)
    const spill = this.#spill
    const waitMs = this.#storeWaitMs
    if (spill?.claim !== undefined) {
      // Held live by another process, it is not ended here: that process's next save would bring it back.
      const claim = spill.claim.bind(spill)
      const claimed = await waitForStore(
        this.#serial(key, () => claim(key, this.#claimMs)),
        { deadline: performance.now() + waitMs },
      )
      if (!claimed.ok)
        throw new SessionStoreError(
          'unavailable',
          `the session store did not answer the claim of session "${key}" within ${waitMs} ms: it was not ended`,
        )
      if (claimed.value !== undefined)
        throw new SessionStoreError('claimed', this.#heldElsewhere(key, claimed.value, 'it was not ended'))
    }
    const entry = this.#sessions.get(key)
    if (entry?.parked !== undefined)
      throw new SessionStoreError('claimed', `${parkedMessage(key, entry.parked.until - Date.now())}: it was not ended`)
    this.#gone.delete(key)
    this.#savedHere.delete(key)
    if (entry !== undefined) entry.claimedUntil = 0 // released below, with the saved state
    if (entry?.busy === true) entry.ended = true
    else if (entry !== undefined) this.#forget(entry, undefined)
    let saved = false
    if (spill !== undefined) {
      const removed = await waitForStore(
        this.#serial(key, async () => {
          const had = await spill.remove(key)
          await spill.release?.(key).catch(() => undefined)
          return had
        }),
        { deadline: performance.now() + waitMs },
      )
      if (!removed.ok)
        throw new SessionStoreError(
          'unavailable',
          `the session store did not answer within ${waitMs} ms: session "${key}" may still be saved there`,
        )
      saved = removed.value
    }
    return entry !== undefined || saved
  }

  /** Drops idle sessions unused for `idleTtlMs`; with a spill, saves those idle for `suspendAfterMs`. */
  sweep(now = Date.now()): void {
    for (const entry of this.#sessions.values()) {
      if (entry.parked !== undefined && now >= entry.parked.until) {
        // Its suspended program was not resumed in time: the session goes on from its state before that program.
        entry.parked = undefined
        entry.busy = false
        entry.lastUsed = now
        entry.note =
          'a program of this session suspended (durable approval) and was not resumed within its hold: the session went on from its state before that program'
      }
      // A claim that would run out before the next sweeps is renewed, for a running session too.
      if (entry.claimedUntil > 0 && entry.claimedUntil - now < this.#claimMs / 2 && entry.claimLost === undefined)
        void this.#renew(entry, undefined)
      if (entry.busy) continue
      const idle = now - entry.lastUsed
      const failed = entry.saveFailed
      if (idle >= this.limits.idleTtlMs) {
        this.#forget(
          entry,
          `it was idle for ${this.limits.idleTtlMs} ms (idleTtlMs)${failed === undefined ? '' : `, and saving it to the session store kept failing: ${failed.why}`}`,
        )
      }
      // At the cap of saves in progress it stays live (and counts as live) until the store catches up; after a save
      // that failed, the next is tried suspendAfterMs later.
      else if (
        this.#spill !== undefined &&
        idle >= this.#spill.suspendAfterMs &&
        !this.#savesFull(entry) &&
        (failed === undefined || now - failed.at >= this.#spill.suspendAfterMs)
      ) {
        this.#letGo(entry, 'it was idle', true)
      }
    }
    if (this.#sessions.size === 0) this.#stopSweeping()
  }

  /** `key`'s store operations in progress (the release of `detach`), given up on after the spill's `storeWaitMs`. */
  async quiet(key: string): Promise<void> {
    const last = this.#saving.get(key)
    if (last !== undefined) await waitForStore(last, { deadline: performance.now() + this.#storeWaitMs })
  }

  /** Saves in progress (a caller that must not lose them, e.g. at shutdown, waits for these). */
  async settled(): Promise<void> {
    await Promise.all([...this.#inFlight, ...this.#saving.values()])
  }

  /** `operation` on the spill's store once the last one of `key` has ended (`#saving`). */
  #serial<T>(key: string, operation: () => Promise<T>): Promise<T> {
    const before = this.#saving.get(key)
    const result = before === undefined ? operation() : before.then(operation)
    const done: Promise<void> = result.then(
      () => undefined,
      () => undefined,
    )
    this.#saving.set(key, done)
    void done.then(() => {
      if (this.#saving.get(key) === done) this.#saving.delete(key)
    })
    return result
  }

  /** How long a claim lasts past what a run needs (renewed by the sweeps, at most a quarter of it apart). */
  get #claimMs(): number {
    return this.#spill?.claimMs ?? CLAIM_MS
  }

  /** How long `close`, `end` and the other waits for the spill's store last (the spill's `storeWaitMs`). */
  get #storeWaitMs(): number {
    return this.#spill?.storeWaitMs ?? STORE_WAIT_MS
  }

  /**
   * The part of a claim that covers the run: its time left (0 without a deadline), at most ten claims' time.
   * The sweeps renew a running session's claim too; this covers a run that holds the event loop (inline
   * isolation) past them, without locking a session for hours after a crash when a run's wall is that long.
   */
  #runMs(wait: SessionWait | undefined): number {
    return wait === undefined ? 0 : Math.min(10 * this.#claimMs, Math.max(0, wait.deadline - performance.now()))
  }

  /** `entry`'s claim (if the store has claims) lasts through a run of `wait` and half a claim beyond. */
  #claimCovers(entry: SessionEntry<S>, wait: SessionWait | undefined): boolean {
    return this.#spill?.claim === undefined || entry.claimedUntil - Date.now() >= this.#runMs(wait) + this.#claimMs / 2
  }

  /** Claims `entry`'s key for the run of `wait` and a claim's time beyond: `undefined` when held, else why not. */
  async #claim(
    entry: SessionEntry<S>,
    wait: SessionWait | undefined,
    replaces?: string,
  ): Promise<SessionClaim | undefined> {
    const claim = this.#spill?.claim
    if (claim === undefined) return undefined
    const at = Date.now()
    const ttl = Math.ceil(this.#runMs(wait) + this.#claimMs)
    const refused = await claim(entry.key, ttl, replaces)
    if (refused === undefined) entry.claimedUntil = at + ttl
    return refused
  }

  /**
   * Renews `entry`'s claim: `undefined` when renewed or when the store failed but the claim still holds
   * (tried again later), else why the session cannot run here (another process holds it now: `claimLost`).
   */
  async #renew(entry: SessionEntry<S>, wait: SessionWait | undefined): Promise<string | undefined> {
    if (entry.renewing !== undefined) return entry.renewing
    const renewing = this.#serial(entry.key, async () => {
      if (this.#sessions.get(entry.key) !== entry || entry.claimedUntil === 0) return undefined // let go of, ended, replaced meanwhile
      try {
        const other = await this.#claim(entry, wait)
        if (other !== undefined)
          entry.claimLost = this.#heldElsewhere(
            entry.key,
            other,
            "this process's claim on it had lapsed: this program did not run, and the state this process held was dropped",
          )
        return entry.claimLost
      } catch (error) {
        return entry.claimedUntil > Date.now() + this.#runMs(wait)
          ? undefined
          : `the session store failed to renew this process's claim on session "${entry.key}" (${brief(error)}); the program did not run`
      }
    })
    entry.renewing = renewing
    try {
      return await renewing
    } finally {
      entry.renewing = undefined
    }
  }

  /** Why `key` cannot run here: `other` holds it. */
  #heldElsewhere(key: string, other: SessionClaim, then: string): string {
    if (parked(other)) return `${parkedMessage(key, other.expiresInMs)}: ${then}`
    const after =
      this.#spill === undefined
        ? ''
        : `; a process lets a session go to the store once it has been idle for suspendAfterMs = ${this.#spill.suspendAfterMs} ms`
    return `session "${key}" is held by another process sharing the session store (its claim runs out in ${Math.ceil(other.expiresInMs / 1000)} s unless renewed${after}): ${then}`
  }

  /**
   * Ends this process's claim on `key` once the key's store operations in progress have ended: after a claim
   * given up on (the store answered too late, or failed), which may yet have been made, so that it does not keep
   * the session from the other processes until it runs out.
   */
  #releaseLate(key: string): void {
    const release = this.#spill?.release
    if (release === undefined || this.#sessions.has(key)) return
    void this.#serial(key, () => (this.#sessions.has(key) ? Promise.resolve() : release(key))).catch(() => undefined)
  }

  /** Ends `entry`'s claim, after the key's store operations in progress. */
  #release(entry: SessionEntry<S>): void {
    const release = this.#spill?.release
    if (release === undefined || entry.claimedUntil === 0) return
    entry.claimedUntil = 0
    void this.#serial(entry.key, () => release(entry.key)).catch(() => undefined)
  }

  /**
   * An idle session leaves memory: saved to the spill when there is one, else dropped. `retry`: a save that fails
   * (the store is down, or full) puts the session back in memory when nothing took its place meanwhile, for the
   * next sweeps to try again until its `idleTtlMs` (an idle session's state was dropped when Redis was unavailable
   * for a few seconds, with one session of 64 live).
   */
  #letGo(entry: SessionEntry<S>, why: string, retry = false): void {
    const spill = this.#spill
    const state = entry.state
    // Another process holds it now: what this one held must not go over that process's saves.
    if (entry.claimLost !== undefined) return this.#forget(entry, undefined, false)
    if (spill === undefined || state === undefined) return this.#forget(entry, why)
    this.#sessions.delete(entry.key)
    entry.state = undefined
    const { key, runs, claimedUntil } = entry
    entry.claimedUntil = 0
    let kept = false
    const retrying = { cancelled: false }
    if (retry) this.#retrying.set(key, retrying)
    const keep = (error: unknown): boolean => {
      if (!retry || retrying.cancelled) return false
      const live = this.#sessions.get(key)
      if (live !== undefined) {
        // A run of the session started during the save: it waits for the save before it loads (`#serial`), and
        // takes the state from here instead (see `take`).
        if (!live.busy || live.state !== undefined || live.bare === true || live.ended || live.claimLost !== undefined)
          return false
        Object.assign(live, { state, bytes: entry.bytes, runs })
        return (kept = true)
      }
      if (this.#sessions.size >= this.limits.maxSessions) return false
      Object.assign(entry, { state, claimedUntil, saveFailed: { at: Date.now(), why: brief(error) } })
      this.#sessions.set(key, entry)
      this.#startSweeping()
      return (kept = true)
    }
    // Saved, then the claim ended (another process may take the session once the store has it).
    void this.#saveThen(
      key,
      state,
      runs,
      claimedUntil,
      (error) => `${why}, and saving it failed: ${brief(error)}`,
      async () => {
        if (this.#retrying.get(key) === retrying) this.#retrying.delete(key)
        if (claimedUntil > 0 && !kept) await spill.release?.(key).catch(() => undefined)
      },
      keep,
    )
  }

  /** An idle save of `key` in progress no longer gives its state back if it fails (see `#retrying`). */
  #cancelRetry(key: string): void {
    const retrying = this.#retrying.get(key)
    if (retrying === undefined) return
    retrying.cancelled = true
    this.#retrying.delete(key)
  }

  /**
   * Saves `state`, what `key`'s session held, to the spill and drops it, then `after()` (which ends the claim or
   * hands it on): one store operation of `key`, counted among the saves in progress. The sweeps no longer renew
   * the claim this process held (`claimedUntil`, 0 for none): one that would run out during the save is renewed
   * first, and one that lapsed leaves the state unsaved. A failed save is remembered for the session's next run,
   * unless `keep()` took the state back (a store that failed, not another process's claim).
   */
  #saveThen<T>(
    key: string,
    state: S | undefined,
    runs: number,
    claimedUntil: number,
    failed: (error: unknown) => string,
    after: () => Promise<T>,
    keep?: (error: unknown) => boolean,
  ): Promise<T> {
    const spill = this.#spill as SessionSpill<S>
    const saveMs = this.#storeWaitMs
    const saving = this.#serial(key, async () => {
      if (state !== undefined) {
        let kept = false
        try {
          if (claimedUntil > 0 && spill.claim !== undefined && claimedUntil - Date.now() < saveMs + this.#claimMs / 2) {
            const other = await spill.claim(key, saveMs + this.#claimMs)
            if (other !== undefined) {
              keep = undefined
              throw new Error(
                this.#heldElsewhere(key, other, "this process's claim on it had lapsed, and its state was not saved"),
              )
            }
          }
          await spill.save(key, state, runs)
          this.#recent(this.#savedHere, key, Date.now())
        } catch (error) {
          kept = keep?.(error) === true
          if (!kept) this.#remember(key, failed(error))
        } finally {
          if (!kept) this.#drop(state)
        }
      }
      return after()
    })
    const done: Promise<void> = saving
      .then(
        () => undefined,
        () => undefined,
      )
      .finally(() => this.#inFlight.delete(done))
    this.#inFlight.add(done)
    return saving
  }

  /** Letting `entry` go would start a save, and `maxSessions` saves are in progress already. */
  #savesFull(entry: SessionEntry<S>): boolean {
    return this.#spill !== undefined && entry.state !== undefined && this.#inFlight.size >= this.limits.maxSessions
  }

  /** Why no session can start: every one of `maxSessions` runs a program, or waits for a suspended one's resume. */
  #allBusy(): string {
    const held = [...this.#sessions.values()].filter((e) => e.parked !== undefined).length
    const waiting = held === 0 ? '' : ` (${held} of them wait for the resume of a program that suspended)`
    return `all ${this.limits.maxSessions} sessions are running programs${waiting} (maxSessions)`
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
    this.#closed = true
    // A suspend in progress ends first (within storeWaitMs): one that failed leaves its session to be saved below.
    await Promise.allSettled([...this.#detaching])
    for (const key of [...this.#retrying.keys()]) this.#cancelRetry(key)
    for (const entry of [...this.#sessions.values()]) {
      // A session held for a suspended run's resume goes with its state from before that run.
      if (!entry.busy || entry.parked !== undefined) this.#letGo(entry, 'the runtime was disposed')
      else this.#release(entry)
    }
    await waitForStore(this.settled(), { deadline: performance.now() + this.#storeWaitMs })
    this.clear()
  }

  /** Drops every session. */
  clear(): void {
    for (const entry of [...this.#sessions.values()]) this.#forget(entry, undefined)
    this.#gone.clear()
    this.#savedHere.clear()
    this.#stopSweeping()
  }

  /**
   * A run that could not take `entry` (the store did not answer): an entry that holds a state (handed over by a
   * save that failed, see `#letGo`) stays, idle, for the sweeps to save; one without is dropped.
   */
  #giveUp(entry: SessionEntry<S>): void {
    if (entry.state === undefined) return this.#forget(entry, undefined)
    entry.busy = false
  }

  /** Drops `entry` (and, unless `release` is false, ends its claim). */
  #forget(entry: SessionEntry<S>, why: string | undefined, release = true): void {
    if (release) this.#release(entry)
    this.#sessions.delete(entry.key)
    if (entry.state !== undefined) this.#drop(entry.state)
    entry.state = undefined
    if (why !== undefined) this.#remember(entry.key, why)
  }

  /** Why `key`'s state is gone, for its next run. Bounded: only the most recent reasons are remembered. */
  #remember(key: string, why: string): void {
    this.#recent(this.#gone, key, why)
  }

  /** Sets `key` in `map` as its most recent entry; past 4 x maxSessions entries, the oldest goes. */
  #recent<T>(map: Map<string, T>, key: string, value: T): void {
    map.delete(key)
    map.set(key, value)
    if (map.size > 4 * this.limits.maxSessions) map.delete(map.keys().next().value as string)
  }

  #startSweeping(): void {
    if (this.#sweeper !== undefined || this.#closed) return
    const every =
      Math.min(
        this.limits.idleTtlMs,
        this.#spill?.suspendAfterMs ?? Infinity,
        this.#spill?.claim === undefined ? Infinity : this.#claimMs / 2,
      ) / 2
    this.#sweeper = setInterval(() => this.sweep(), Math.max(50, Math.min(60_000, every)))
    this.#sweeper.unref()
  }

  #stopSweeping(): void {
    clearInterval(this.#sweeper)
    this.#sweeper = undefined
  }
}
