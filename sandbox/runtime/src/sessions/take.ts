import type { SessionEntry, SessionTurn, SessionWait } from './entry.js'
import { heldForResume } from './hold.js'
import * as notes from './notes.js'
import type { TableParts } from './parts.js'
import type { SessionClaim } from './store/store.js'
import { waitForStore, type StoreAnswer } from './store/wait.js'

/**
 * What a take does next when a look at the table does not answer it: start a new session (there is room), renew
 * the live one's claim first, wait for another program's claim here to settle (a resume), or wait for room.
 */
type Next<S> =
  | { readonly next: 'start' }
  | { readonly next: 'renew'; readonly live: SessionEntry<S> }
  | { readonly next: 'poll' }
  | { readonly next: 'room' }

const START = { next: 'start' } as const
const POLL = { next: 'poll' } as const
const ROOM = { next: 'room' } as const

/** How long a resume waits between looks at another program's claim in flight in this table. */
const CLAIM_IN_FLIGHT_POLL_MS = 2

/**
 * Takes `key`'s session for a run (see `SessionTable.take`): the live one when there is one, else a new one (room
 * made for it at the cap), claimed in the store and loaded from it.
 *
 * Each look at the table and the change it leads to run in one synchronous step, awaiting only the store or a timer:
 * another take in between would find the session free too, and two runs would fork it (take.test.ts).
 */
export async function takeSession<S>(
  t: TableParts<S>,
  key: string,
  now: number,
  wait: SessionWait | undefined,
  resumes: string | undefined,
): Promise<SessionTurn<S>> {
  const since = performance.now()
  for (;;) {
    t.sweep(now)
    const live = t.live.get(key)
    const look = live === undefined ? lookForRoom(t, resumes) : lookAtLive(t, live, now, wait, resumes)
    if ('ok' in look) return look
    if (look.next === 'start') return startSession(t, key, now, wait, resumes)
    if (look.next === 'renew') {
      const renewing = performance.now()
      const renewed = await waitForStore(t.claims.renew(look.live, wait), wait ?? {})
      const turn = takeRenewed(t, look.live, now, renewed, renewing)
      if (turn !== undefined) return turn
    } else if (look.next === 'poll') {
      await new Promise((resolve) => setTimeout(resolve, CLAIM_IN_FLIGHT_POLL_MS))
    } else {
      const room = await waitForStore(t.order.anySaved(), wait ?? {})
      if (!room.ok) {
        const message = notes.noRoom(t.saves.behind(), Math.round(performance.now() - since), key, false)
        return { ok: false, reason: room.reason, message }
      }
    }
    now = Date.now()
  }
}

/** The turn of a run whose session is live: held for a resume, busy, lost, taken, or its claim to renew first. */
function lookAtLive<S>(
  t: TableParts<S>,
  live: SessionEntry<S>,
  now: number,
  wait: SessionWait | undefined,
  resumes: string | undefined,
): SessionTurn<S> | Next<S> {
  if (live.parked !== undefined) return t.parking.takeHeld(live, now, resumes)
  if (resumes !== undefined) return resumeFindsLive(t, live, wait)
  if (live.busy) return { ok: false, message: notes.busyForRun(live.key, live.suspending === true) }
  if (live.claimLost !== undefined) {
    // Held by another process now: this one's copy goes.
    t.live.forget(live, undefined, false)
    return { ok: false, message: live.claimLost }
  }
  // A claim that would run out before this run could end is renewed first.
  if (!t.claims.covers(live, wait)) return { next: 'renew', live }
  return handOut(t, live, now)
}

/**
 * A resume whose session is live here but not held for it: another program of this process is claiming it (the
 * hold may refuse that one; the store's answer says, looked at again shortly), or the session went on without it.
 */
function resumeFindsLive<S>(
  t: TableParts<S>,
  live: SessionEntry<S>,
  wait: SessionWait | undefined,
): SessionTurn<S> | Next<S> {
  const claimInFlight = live.busy && live.claimedUntil === 0 && t.claims.active
  if (!claimInFlight) return { ok: false, message: notes.wentOn(live.key) }
  if (performance.now() >= (wait?.deadline ?? Infinity)) {
    return { ok: false, reason: 'wall', message: notes.claimedHereMeanwhile(live.key, true) }
  }
  if (wait?.signal?.aborted === true) {
    return { ok: false, reason: 'abort', message: notes.claimedHereMeanwhile(live.key, false) }
  }
  return POLL
}

/**
 * After the renewal of `live`'s claim (asked at `renewing`): the refusal, or `live` taken, or `undefined` to look
 * again when the table changed meanwhile (let go of, or taken by another run).
 */
function takeRenewed<S>(
  t: TableParts<S>,
  live: SessionEntry<S>,
  now: number,
  renewed: StoreAnswer<string | undefined>,
  renewing: number,
): SessionTurn<S> | undefined {
  if (!renewed.ok) {
    const message = notes.storeLate(live.key, 'renewal', Math.round(performance.now() - renewing))
    return { ok: false, reason: renewed.reason, message }
  }
  const refused = renewed.value
  if (refused !== undefined) {
    // Held by another process now: this one's copy goes. (A store that failed keeps it, for a later try.)
    if (live.claimLost !== undefined && t.live.holds(live) && !live.busy) t.live.forget(live, undefined, false)
    return { ok: false, message: refused }
  }
  if (!t.live.holds(live) || live.busy) return undefined
  return handOut(t, live, now)
}

/** `live` taken for the run, as the most recently used, with its note (told once). */
function handOut<S>(t: TableParts<S>, live: SessionEntry<S>, now: number): SessionTurn<S> {
  live.busy = true
  live.lastUsed = now
  t.live.touch(live)
  const note = live.note
  live.note = undefined
  const fresh = live.state === undefined
  return note === undefined ? { ok: true, entry: live, fresh } : { ok: true, entry: live, fresh, note }
}

/**
 * Room for a new session: at the cap, the least recently used idle session is let go of (once the saves in
 * progress leave room for its save); refused when every session runs. A resume goes over the cap instead.
 */
function lookForRoom<S>(t: TableParts<S>, resumes: string | undefined): SessionTurn<S> | Next<S> {
  const { maxSessions } = t.live.limits
  if (t.live.size < maxSessions) return START
  const idle = t.live.leastRecentIdle()
  // A resumed program's session was admitted when the program started: over the cap rather than lose its state.
  if (idle === undefined && resumes !== undefined) return START
  if (idle === undefined) return { ok: false, message: t.live.allBusy() }
  // Letting the idle one go now would hold one more state until the store takes it: wait for room.
  if (t.saves.full(idle)) return ROOM
  t.saves.letGo(idle, notes.leastRecentlyUsed(maxSessions, false))
  return START
}

/**
 * A new session of `key` for the run, put in the table at once (busy): claimed in the store, then, for a resume,
 * bare (the resumed run's state holds the session's); else with the state a failed idle save handed to it, or
 * loaded from the spill.
 */
async function startSession<S>(
  t: TableParts<S>,
  key: string,
  now: number,
  wait: SessionWait | undefined,
  resumes: string | undefined,
): Promise<SessionTurn<S>> {
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
  t.live.add(entry)
  if (t.claims.active) {
    const claiming = performance.now()
    let other: SessionClaim | undefined
    try {
      const claimed = await waitForStore(
        t.order.serial(key, () => t.claims.claim(entry, wait, resumes)),
        wait ?? {},
      )
      if (!claimed.ok) return giveUpClaim(t, entry, { reason: claimed.reason, claiming })
      other = claimed.value
    } catch (error) {
      return giveUpClaim(t, entry, { error })
    }
    if (other !== undefined) return refusedBy(t, entry, other, resumes)
  }
  // Nothing to load: the store keeps the session's state from before the resumed run.
  if (resumes !== undefined) {
    entry.bare = true
    return { ok: true, entry, fresh: false }
  }
  // Its idle state, whose save failed while this run waited for it, was handed to this run (`Saves.letGo`).
  if (entry.state !== undefined) return { ok: true, entry, fresh: false }
  return t.saves.load(entry, wait)
}

/**
 * A claim that failed, or that the store did not answer before the run's deadline or signal (since `claiming`): the
 * entry goes (unless handed a state), and a claim that may yet have been made ends.
 */
function giveUpClaim<S>(
  t: TableParts<S>,
  entry: SessionEntry<S>,
  why: { error: unknown } | { reason: 'wall' | 'abort'; claiming: number },
): SessionTurn<S> {
  if (t.live.holds(entry)) t.live.giveUp(entry)
  t.claims.releaseLate(entry.key)
  if ('error' in why) return { ok: false, reason: 'store', message: notes.claimFailed(entry.key, why.error) }
  const message = notes.storeLate(entry.key, 'claim', Math.round(performance.now() - why.claiming))
  return { ok: false, reason: why.reason, message }
}

/**
 * The run does not take `entry`'s session, which `other` holds: what this process kept goes (that process's saves
 * are the session's). A resume finds that the session went on without it.
 */
function refusedBy<S>(
  t: TableParts<S>,
  entry: SessionEntry<S>,
  other: SessionClaim,
  resumes: string | undefined,
): SessionTurn<S> {
  const { key } = entry
  const message =
    resumes !== undefined
      ? notes.wentOn(key, other)
      : t.claims.heldElsewhere(key, other, heldForResume(other) ? notes.NOT_RUN : notes.NOT_RUN_HELD)
  if (t.live.holds(entry)) t.live.forget(entry, undefined)
  return { ok: false, message }
}
