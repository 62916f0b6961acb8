import type { SessionEntry } from './entry.js'
import * as notes from './notes.js'
import type { TableParts } from './parts.js'
import type { SessionSpill } from './spill.js'
import { SessionStoreError } from './store/errors.js'
import type { SessionClaim } from './store/store.js'
import { waitForStore, type StoreAnswer } from './store/wait.js'

/**
 * Drops `key`'s session, live or saved (see `SessionTable.end`); whether it existed. The store's answer to the
 * claim and the live session's end are one synchronous step, as the take's are (take.ts).
 */
export async function endSession<S>(t: TableParts<S>, key: string): Promise<boolean> {
  t.saves.cancelRetry(key)
  const spill = t.spill
  const waitMs = t.saves.storeWaitMs
  if (spill?.claim !== undefined) {
    // Held live by another process, it is not ended here: that process's next save would bring it back.
    const claim = spill.claim.bind(spill)
    const claiming = t.order.serial(key, () => claim(key, t.claims.claimMs))
    refuseUnlessClaimed(t, key, await waitForStore(claiming, { deadline: performance.now() + waitMs }), waitMs)
  }
  const entry = endLive(t, key)
  let saved = false
  if (spill !== undefined) {
    const removing = t.order.serial(key, () => removeSaved(spill, key))
    const removed = await waitForStore(removing, { deadline: performance.now() + waitMs })
    if (!removed.ok) throw new SessionStoreError('unavailable', notes.storeSilent(key, waitMs, 'remove'))
    saved = removed.value
  }
  return entry !== undefined || saved
}

/** Throws unless the store answered `claimed` (within `waitMs`) that this process holds `key` now. */
function refuseUnlessClaimed<S>(
  t: TableParts<S>,
  key: string,
  claimed: StoreAnswer<SessionClaim | undefined>,
  waitMs: number,
): void {
  if (!claimed.ok) throw new SessionStoreError('unavailable', notes.storeSilent(key, waitMs, 'end'))
  if (claimed.value !== undefined) {
    throw new SessionStoreError('claimed', t.claims.heldElsewhere(key, claimed.value, notes.NOT_ENDED))
  }
}

/**
 * Ends `key`'s live session, if any (refused while it is held for a resume): a run in progress finishes, and its
 * state is not kept. Its claim is released with the saved state.
 */
function endLive<S>(t: TableParts<S>, key: string): SessionEntry<S> | undefined {
  const entry = t.live.get(key)
  if (entry?.parked !== undefined) throw new SessionStoreError('claimed', t.parking.refusal(entry, notes.NOT_ENDED))
  t.live.clearGone(key)
  t.saves.forgetSaved(key)
  if (entry !== undefined) entry.claimedUntil = 0
  if (entry?.busy === true) entry.ended = true
  else if (entry !== undefined) t.live.forget(entry, undefined)
  return entry
}

/** Removes `key`'s saved state and ends this process's claim on it: whether there was one. */
async function removeSaved<S>(spill: SessionSpill<S>, key: string): Promise<boolean> {
  const had = await spill.remove(key)
  await spill.release?.(key).catch(() => undefined)
  return had
}
