import { SandboxUsageError } from '../errors.js'
import type { SessionEntry } from './entry.js'
import * as notes from './notes.js'
import type { TableParts } from './parts.js'
import { SessionStoreError, SnapshotError } from './store/errors.js'
import type { SessionClaim } from './store/store.js'
import { waitForStore, type StoreAnswer } from './store/wait.js'

/**
 * Puts a resumed session in the table (see `SessionTable.attach`). The store's answer to the claim and the room
 * made for the session are one synchronous step, as the take's are (take.ts).
 */
export async function attachSession<S>(
  t: TableParts<S>,
  key: string,
  state: S,
  bytes: number,
  runs: number,
): Promise<void> {
  // Before anything changes: the host's bound (maxSessions x maxSessionBytes) holds for resumed sessions too.
  const max = t.live.limits.maxSessionBytes
  if (bytes > max) throw new SnapshotError('too-large', notes.overBudget(key, bytes, max))
  t.saves.cancelRetry(key)
  const since = performance.now()
  const held = t.live.get(key)
  if (held?.parked !== undefined) throw new SessionStoreError('claimed', t.parking.refusal(held, notes.NOT_RESUMED))
  const lastUsed = Date.now()
  const entry: SessionEntry<S> = { key, state, bytes, runs, busy: false, ended: false, lastUsed, claimedUntil: 0 }
  if (t.claims.active) {
    const live = t.live.get(key)
    refuseIfBusy(key, live)
    const waitMs = t.saves.storeWaitMs
    const claiming = t.order.serial(key, () => t.claims.claim(entry, undefined))
    takeClaim(t, key, live, await waitForStore(claiming, { deadline: since + waitMs }), waitMs)
  }
  try {
    await makeRoomFor(t, key, since)
  } catch (error) {
    // The live session of that key stays: the claim is its own again.
    const live = t.live.get(key)
    if (live !== undefined && live.claimedUntil === 0 && entry.claimedUntil > 0) live.claimedUntil = entry.claimedUntil
    else t.claims.release(entry)
    throw error
  }
  t.live.clearGone(key)
  t.live.add(entry)
}

/**
 * The store's answer to the resumed session's claim (within `waitMs`): throws when it did not answer or another
 * process holds the session; else the claim, this process's, is the resumed session's, no longer `live`'s.
 */
function takeClaim<S>(
  t: TableParts<S>,
  key: string,
  live: SessionEntry<S> | undefined,
  claimed: StoreAnswer<SessionClaim | undefined>,
  waitMs: number,
): void {
  if (!claimed.ok) {
    t.claims.releaseLate(key)
    throw new SessionStoreError('unavailable', notes.storeSilent(key, waitMs, 'resume'))
  }
  if (claimed.value !== undefined) {
    throw new SessionStoreError('claimed', t.claims.heldElsewhere(key, claimed.value, notes.NOT_RESUMED_HERE))
  }
  if (live !== undefined) live.claimedUntil = 0
}

/**
 * Room in the table for `key`: an idle live session of that key goes, and at the cap the least recently used other
 * idle one (once the saves in progress leave room for its save, within the spill's `storeWaitMs` from `since`).
 */
async function makeRoomFor<S>(t: TableParts<S>, key: string, since: number): Promise<void> {
  const { maxSessions } = t.live.limits
  for (;;) {
    const live = t.live.get(key)
    refuseIfBusy(key, live)
    const others = t.live.size - (live === undefined ? 0 : 1)
    if (others < maxSessions) {
      if (live !== undefined) t.live.forget(live, undefined)
      return
    }
    const idle = t.live.leastRecentIdle(live)
    if (idle === undefined) throw new SandboxUsageError(t.live.allBusy())
    if (t.saves.full(idle)) {
      const waitMs = t.saves.storeWaitMs
      const room = await waitForStore(t.order.anySaved(), { deadline: since + waitMs })
      if (!room.ok) throw new SessionStoreError('unavailable', notes.noRoom(t.saves.behind(), waitMs, key, true))
      continue
    }
    if (live !== undefined) t.live.forget(live, undefined)
    t.saves.letGo(idle, notes.leastRecentlyUsed(maxSessions, true))
    return
  }
}

/** Throws while a program of `key`'s live session runs, or it is being suspended: it cannot be resumed into now. */
function refuseIfBusy<S>(key: string, live: SessionEntry<S> | undefined): void {
  if (live?.busy === true) throw new SandboxUsageError(notes.busyForResume(key, live.suspending === true))
}
