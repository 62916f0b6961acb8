import type { SessionEntry, SessionTurn, SessionWait } from './entry.js'
import { heldForResume } from './hold.js'
import * as notes from './notes.js'
import type { TableParts } from './parts.js'
import type { SessionClaim } from './store/store.js'
import { waitForStore } from './store/wait.js'

/** No live session of the key, and room for one: a new entry starts. */
const ROOM = Symbol('room')
/** The table changed while the take waited (for the store, or another program's claim): it looks again. */
const AGAIN = Symbol('again')

type Step<S> = SessionTurn<S> | typeof ROOM | typeof AGAIN

/** How long a resume waits between looks at another program's claim in flight in this table. */
const CLAIM_IN_FLIGHT_POLL_MS = 2

/**
 * Takes `key`'s session for a run (see `SessionTable.take`): the live one when there is one, else a new one (room
 * made for it at the cap), claimed in the store and loaded from it.
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
    const step =
      live === undefined ? await makeRoom(t, key, wait, resumes, since) : await takeLive(t, live, now, wait, resumes)
    if (step === ROOM) return startSession(t, key, now, wait, resumes)
    if (step !== AGAIN) return step
    now = Date.now()
  }
}

/** The turn of a run whose session is live: held for a resume, busy, or taken (its claim renewed first if need be). */
async function takeLive<S>(
  t: TableParts<S>,
  live: SessionEntry<S>,
  now: number,
  wait: SessionWait | undefined,
  resumes: string | undefined,
): Promise<Step<S>> {
  if (live.parked !== undefined) return t.parking.takeHeld(live, now, resumes)
  if (resumes !== undefined) return resumeFindsLive(t, live, wait)
  if (live.busy) return { ok: false, message: notes.busyForRun(live.key, live.suspending === true) }
  if (live.claimLost !== undefined || !t.claims.covers(live, wait)) {
    // Its claim is lost, or would run out before this run could end: renewed first (or the session is dropped).
    const renewed = await renewClaim(t, live, wait)
    if (renewed !== undefined) return renewed
  }
  return handOut(t, live, now)
}

/**
 * A resume whose session is live here but not held for it: another program of this process is claiming it (the
 * hold may refuse that one; the store's answer says, looked at again shortly), or the session went on without it.
 */
async function resumeFindsLive<S>(
  t: TableParts<S>,
  live: SessionEntry<S>,
  wait: SessionWait | undefined,
): Promise<Step<S>> {
  const claimInFlight = live.busy && live.claimedUntil === 0 && t.claims.active
  if (!claimInFlight) return { ok: false, message: notes.wentOn(live.key) }
  if (performance.now() >= (wait?.deadline ?? Infinity)) {
    return { ok: false, reason: 'wall', message: notes.claimedHereMeanwhile(live.key, true) }
  }
  if (wait?.signal?.aborted === true) {
    return { ok: false, reason: 'abort', message: notes.claimedHereMeanwhile(live.key, false) }
  }
  await new Promise((resolve) => setTimeout(resolve, CLAIM_IN_FLIGHT_POLL_MS))
  return AGAIN
}

/** Renews `live`'s claim for the run: nothing when it holds, else the refusal, or `AGAIN` when the table changed. */
async function renewClaim<S>(
  t: TableParts<S>,
  live: SessionEntry<S>,
  wait: SessionWait | undefined,
): Promise<Step<S> | undefined> {
  let refused = live.claimLost
  if (refused === undefined) {
    const renewing = performance.now()
    const renewed = await waitForStore(t.claims.renew(live, wait), wait ?? {})
    if (!renewed.ok) {
      const message = notes.storeLate(live.key, 'renewal', Math.round(performance.now() - renewing))
      return { ok: false, reason: renewed.reason, message }
    }
    refused = renewed.value
  }
  if (refused !== undefined) {
    // Held by another process now: this one's copy goes. (A store that failed keeps it, for a later try.)
    if (live.claimLost !== undefined && t.live.holds(live) && !live.busy) t.live.forget(live, undefined, false)
    return { ok: false, message: refused }
  }
  // Let go of or taken while it was renewed: looked at again.
  return !t.live.holds(live) || live.busy ? AGAIN : undefined
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
 * Room for a new session of `key`: at the cap, the least recently used idle session is let go of (once the saves
 * in progress leave room for its save); refused when every session runs. A resume goes over the cap instead.
 */
async function makeRoom<S>(
  t: TableParts<S>,
  key: string,
  wait: SessionWait | undefined,
  resumes: string | undefined,
  since: number,
): Promise<Step<S>> {
  const { maxSessions } = t.live.limits
  if (t.live.size < maxSessions) return ROOM
  const idle = t.live.leastRecentIdle()
  // A resumed program's session was admitted when the program started: over the cap rather than lose its state.
  if (idle === undefined && resumes !== undefined) return ROOM
  if (idle === undefined) return { ok: false, message: t.live.allBusy() }
  if (t.saves.full(idle)) {
    // Letting the idle one go now would hold one more state until the store takes it: wait for room.
    const room = await waitForStore(t.order.anySaved(), wait ?? {})
    if (!room.ok) {
      const message = notes.noRoom(t.saves.behind(), Math.round(performance.now() - since), key, false)
      return { ok: false, reason: room.reason, message }
    }
    return AGAIN
  }
  t.saves.letGo(idle, notes.leastRecentlyUsed(maxSessions, false))
  return ROOM
}

/**
 * A new session of `key` for the run: claimed in the store, then, for a resume, bare (the resumed run's state holds
 * the session's); else with the state a failed idle save handed to it, or loaded from the spill.
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
    const refused = await claimNew(t, entry, wait, resumes)
    if (refused !== undefined) return refused
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

/** Claims the new `entry` for the run (from `resumes`, a resume's hold): nothing when claimed, else the refusal. */
async function claimNew<S>(
  t: TableParts<S>,
  entry: SessionEntry<S>,
  wait: SessionWait | undefined,
  resumes: string | undefined,
): Promise<SessionTurn<S> | undefined> {
  const { key } = entry
  const claiming = performance.now()
  let claimed: Awaited<ReturnType<typeof waitForStore<SessionClaim | undefined>>>
  try {
    claimed = await waitForStore(t.order.serial(key, () => t.claims.claim(entry, wait, resumes)), wait ?? {})
  } catch (error) {
    giveUpClaim(t, entry)
    return { ok: false, reason: 'store', message: notes.claimFailed(key, error) }
  }
  if (!claimed.ok) {
    giveUpClaim(t, entry)
    const message = notes.storeLate(key, 'claim', Math.round(performance.now() - claiming))
    return { ok: false, reason: claimed.reason, message }
  }
  if (claimed.value === undefined) return undefined
  // Held by another process, what this one kept goes: that process's saves are the session's.
  if (t.live.holds(entry)) t.live.forget(entry, undefined)
  return { ok: false, message: refusedBy(t, key, claimed.value, resumes) }
}

/** A claim that failed or was not answered in time: the entry goes (unless handed a state), and a late claim ends. */
function giveUpClaim<S>(t: TableParts<S>, entry: SessionEntry<S>): void {
  if (t.live.holds(entry)) t.live.giveUp(entry)
  t.claims.releaseLate(entry.key)
}

/** Why a run does not take `key`, which `other` holds: a resume finds the session went on; others are refused. */
function refusedBy<S>(t: TableParts<S>, key: string, other: SessionClaim, resumes: string | undefined): string {
  if (resumes !== undefined) return notes.wentOn(key, other)
  return t.claims.heldElsewhere(key, other, heldForResume(other) ? notes.NOT_RUN : notes.NOT_RUN_HELD)
}
