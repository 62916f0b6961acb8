/**
 * Every sentence a session's run, or its host, is told about the session: kept together so that they can be
 * read side by side. A note reaches the model's text; a thrown message reaches the host.
 */
import { messageOf } from '../settle.js'
import { heldForResume } from './hold.js'
import type { SessionClaim } from './store/store.js'

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
export function brief(error: unknown): string {
  const message = messageOf(error)
  if (message.length <= NOTE_ERROR_CHARS) return message
  // The head and the tail, where a message says what to do (a file store's corrupt entry: where it was moved aside).
  // Not half a surrogate pair; and copies, not slices: the note is kept (for the session's next run), the whole
  // message must not be.
  const head = message.slice(0, NOTE_ERROR_HEAD).replace(/[\uD800-\uDBFF]$/, '')
  const tail = message.slice(message.length - (NOTE_ERROR_CHARS - NOTE_ERROR_HEAD)).replace(/^[\uDC00-\uDFFF]/, '')
  return `${head.split('').join('')}… (${message.length} characters) …${tail.split('').join('')}`
}

/** Whole seconds in `ms`, rounded up. */
const seconds = (ms: number): number => Math.ceil(ms / 1000)

// Why a session cannot run, or be suspended, resumed or ended, now.

/** Why a session whose program suspended runs no other program now (`SessionTable.park`). */
export function parkedMessage(key: string, leftMs: number): string {
  return (
    `session "${key}" waits for the resume of a program of it that suspended (durable approval): it runs no other ` +
    `program until then, or until that program's hold on it ends in ${Math.max(1, seconds(leftMs))} s ` +
    '(the session then goes on from its state before that program)'
  )
}

/** Why `key` cannot run here: `other` holds it; `suspendAfterMs` is the spill's, when there is one. */
export function heldElsewhere(
  key: string,
  other: SessionClaim,
  then: string,
  suspendAfterMs: number | undefined,
): string {
  if (heldForResume(other)) return `${parkedMessage(key, other.expiresInMs)}: ${then}`
  const after =
    suspendAfterMs === undefined
      ? ''
      : `; a process lets a session go to the store once it has been idle for suspendAfterMs = ${suspendAfterMs} ms`
  return (
    `session "${key}" is held by another process sharing the session store ` +
    `(its claim runs out in ${seconds(other.expiresInMs)} s unless renewed${after}): ${then}`
  )
}

/** What a run refused because another process holds its session is told. */
export const NOT_RUN_HELD =
  "this program did not run, and the session's state is unchanged: " +
  "send a session's programs to one process at a time, or retry later"
/** What a run refused because the session is held for a suspended program's resume is told. */
export const NOT_RUN = 'this program did not run'
/** What a session held for a resume, or by another process, refuses (after `parkedMessage` or `heldElsewhere`). */
export const NOT_SUSPENDED_NOW = 'it cannot be suspended now'
export const NOT_RESUMED = 'it was not resumed'
export const NOT_RESUMED_HERE = 'it was not resumed here'
export const NOT_ENDED = 'it was not ended'
/** Why this process's copy of a session goes: its claim lapsed and another process took the session (a run). */
export const LAPSED_ON_RUN =
  "this process's claim on it had lapsed: this program did not run, and the state this process held was dropped"
/** The same, found by `suspendSession`. */
export const LAPSED_ON_SUSPEND =
  "this process's claim on it had lapsed: it was not suspended, and the state this process held was dropped"
/** The same, found by a save. */
export const LAPSED_ON_SAVE = "this process's claim on it had lapsed, and its state was not saved"

/** Why a run cannot take its session: another program of it runs, or it is being suspended. */
export function busyForRun(key: string, suspending: boolean): string {
  return suspending
    ? `session "${key}" is being suspended (suspendSession): this program did not run`
    : `session "${key}" is running another program; a session runs one program at a time`
}

/** Why a session cannot be resumed into now: a program of it runs, or it is being suspended. */
export function busyForResume(key: string, suspending: boolean): string {
  return suspending
    ? `session "${key}" is being suspended: resume into it once that has ended`
    : `session "${key}" is running a program: resume into it once the program has ended`
}

/** Why a session cannot be suspended now: it is being suspended already, or a program of it runs. */
export function busyForSuspend(key: string, suspending: boolean): string {
  return suspending
    ? `session "${key}" is being suspended already`
    : `session "${key}" is running a program: suspend it once the program has ended`
}

/** Why `suspendSession` dropped a session whose claim another process took. */
export function lapsedForSuspend(key: string): string {
  return (
    `session "${key}" is held by another process sharing the session store (this process's claim on it had ` +
    'lapsed): it was not suspended, and the state this process held was dropped'
  )
}

/** Why a resume waited for another program of this process that claims the session, and gave up. */
export function claimedHereMeanwhile(key: string, atWall: boolean): string {
  return `session "${key}" was being claimed for another program here${atWall ? " until the run's wall" : ''}`
}

/** Why a resumed run's state does not become its session's: the session went on without it. */
export function wentOn(key: string, other?: SessionClaim): string {
  const runsOut = other === undefined ? '' : `its claim runs out in ${seconds(other.expiresInMs)} s`
  const held = other === undefined ? '' : `; another process sharing the session store holds it now (${runsOut})`
  return (
    `session "${key}" went on without this program (its hold on the session for this resume had ended${held}): ` +
    "the program went on, and the state it leaves is not the session's"
  )
}

/** Why no session can start: all `maxSessions` run a program, `held` of them wait for a suspended one's resume. */
export function allBusy(maxSessions: number, held: number): string {
  const waiting = held === 0 ? '' : ` (${held} of them wait for the resume of a program that suspended)`
  return `all ${maxSessions} sessions are running programs${waiting} (maxSessions)`
}

/** Why a session waits for room: `saving` saves in progress. */
export function behind(saving: number, maxSessions: number): string {
  const sessions = `${saving} session${saving === 1 ? '' : 's'}`
  return `the session store was still saving ${sessions} (at most maxSessions = ${maxSessions} saves wait at once)`
}

/** Why a session's state from elsewhere (bytes, a store) is not taken: over this runtime's budget. */
export function overBudget(key: string, bytes: number, max: number): string {
  return (
    `session "${key}" holds ${bytes} bytes of state, over this runtime's budget of ${max} per session ` +
    '(maxSessionBytes): raise sessions.maxSessionBytes to take it'
  )
}

// The session store did not answer, or failed.

/** A store that answered none of `what` of `key` (a claim, a renewal, a load) within `ms`. */
export function storeLate(key: string, what: 'claim' | 'renewal' | 'load', ms: number): string {
  if (what === 'renewal') {
    return `the session store had not answered the renewal of this process's claim on session "${key}" after ${ms} ms`
  }
  if (what === 'claim') return `the session store had not answered the claim of session "${key}" after ${ms} ms`
  return `the session store had not answered for session "${key}" after ${ms} ms`
}

/** A session that waited `ms` for room, which the saves in progress (`behindNow`) did not make. */
export function noRoom(behindNow: string, ms: number, key: string, resumed: boolean): string {
  return `${behindNow} after ${ms} ms: session "${key}" ${resumed ? 'was not resumed' : 'could not start'}`
}

/** The store failed to claim `key` for a run. */
export function claimFailed(key: string, error: unknown): string {
  return (
    `the session store failed to claim session "${key}" for this process (${brief(error)}); ` +
    "the program did not run, and the session's saved state is as it was"
  )
}

/** The store failed to renew this process's claim on `key`, which would not cover the run. */
export function renewalFailed(key: string, error: unknown): string {
  return (
    `the session store failed to renew this process's claim on session "${key}" (${brief(error)}); ` +
    'the program did not run'
  )
}

/** The store could not be read (`unavailable`): the run is refused, the saved state left as it is. */
export function unreadable(error: unknown): string {
  return `${brief(error)}; the program did not run, and the session's saved state is as it was`
}

/** `suspendSession`'s removal of the store's older copy of `key` failed, or was not answered within `waitedMs`. */
export function removalFailed(key: string, failure: { error: unknown } | { waitedMs: number }): string {
  const what = 'error' in failure ? `failed (${brief(failure.error)})` : `did not answer within ${failure.waitedMs} ms`
  return (
    `the session store ${what} when its older copy of session "${key}" was to be removed: ` +
    'the session was not suspended, and stays here as it was'
  )
}

/** The store did not answer `what` of `key` within `ms`. */
export function storeSilent(key: string, ms: number, what: 'resume' | 'end' | 'unpark' | 'remove'): string {
  if (what === 'resume' || what === 'end') {
    const then = what === 'resume' ? 'it was not resumed' : 'it was not ended'
    return `the session store did not answer the claim of session "${key}" within ${ms} ms: ${then}`
  }
  const then = what === 'unpark' ? 'stays held for the dropped run until its hold ends' : 'may still be saved there'
  return `the session store did not answer within ${ms} ms: session "${key}" ${then}`
}

// What a session's run is told about its state.

/** The session's state was dropped (`why`) since its last run. */
export function dropped(why: string): string {
  return `the session's earlier state was dropped: ${why}`
}

/** The store had nothing for a session this process saved `secondsAgo`. */
export function lostInStore(secondsAgo: number): string {
  return (
    `the session's state, which this process saved to the session store ${secondsAgo} s ago, ` +
    'was not there any more (expired or removed there): it starts fresh'
  )
}

/** The saved state could not be resumed (`why`). */
export function notResumable(why: string): string {
  return `the session's saved state could not be resumed (${why}); it starts fresh`
}

/** What this process dropped (`why`) was newer than what the store had. */
export function olderFromStore(why: string): string {
  return `the session's latest state was dropped (${why}); it goes on from the state the session store had`
}

/** Why a run's state was not kept: the session was ended during it. */
export const ENDED_DURING_RUN = 'the session was ended during the run'

/** Why a run's state was not kept: over `maxSessionBytes`. */
export function runOverBudget(bytes: number, max: number): string {
  return (
    `the run left ${bytes} bytes of state, over the session's budget of ${max} (maxSessionBytes); ` +
    'the session keeps its state from before the run'
  )
}

// Why a session was let go of (its next run is told, after `dropped`).

/** The least recently used session went at the cap, for a new session or a resumed one. */
export function leastRecentlyUsed(maxSessions: number, resumed: boolean): string {
  const when = resumed ? 'another was resumed' : 'a new one started'
  return `it was the least recently used of ${maxSessions} sessions (maxSessions) when ${when}`
}

/** An idle session past `idleTtlMs`, whose saves may have kept failing (`failedWhy`). */
export function idleTooLong(idleTtlMs: number, failedWhy: string | undefined): string {
  const failing = failedWhy === undefined ? '' : `, and saving it to the session store kept failing: ${failedWhy}`
  return `it was idle for ${idleTtlMs} ms (idleTtlMs)${failing}`
}

/** An idle session past `suspendAfterMs`, let go of to the store. */
export const IDLE = 'it was idle'

/** Every session of a runtime being disposed. */
export const DISPOSED = 'the runtime was disposed'

/** A save of a session let go of (`why`) failed. */
export function saveFailed(why: string, error: unknown): string {
  return `${why}, and saving it failed: ${brief(error)}`
}

// A run that suspended (durable approval) and the session held for its resume.

/** What the run that suspended is told of its session. */
export const PARKED =
  'the program suspended: the session waits for its resume, and runs no other program until then ' +
  "(its state is the program's, which the resume goes on with)"

/** The session's state before a run that suspended could not be saved. */
export function parkSaveFailed(error: unknown): string {
  return `its state before a program that suspended could not be saved: ${brief(error)}`
}

/** The store did not confirm (within `ms`, when it did not answer) that the session is held for the resume. */
export function holdUnconfirmed(ms: number | undefined): string {
  const within = ms === undefined ? '' : ` within ${ms} ms`
  const then = 'another process may run the session meanwhile'
  return `${PARKED}; but the session store did not confirm the hold${within}: ${then}`
}

/** The session's next run, after its suspended program was dropped. */
export const UNPARKED =
  'a program of this session that suspended was dropped without being resumed: ' +
  'the session went on from its state before that program'

/** The session's next run, after its suspended program's hold ended. */
export const HOLD_ENDED =
  'a program of this session suspended (durable approval) and was not resumed within its hold: ' +
  'the session went on from its state before that program'
