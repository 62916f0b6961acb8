import { SessionStoreError } from './errors.js'
import * as notes from './notes.js'
import type { TableParts } from './parts.js'
import { waitForStore } from './store/wait.js'

/** Drops `key`'s session, live or saved (see `SessionTable.end`); whether it existed. */
export async function endSession<S>(t: TableParts<S>, key: string): Promise<boolean> {
  t.saves.cancelRetry(key)
  if (t.claims.active) await claimToEnd(t, key)
  const entry = t.live.get(key)
  if (entry?.parked !== undefined) throw new SessionStoreError('claimed', t.parking.refusal(entry, notes.NOT_ENDED))
  t.live.clearGone(key)
  t.saves.forgetSaved(key)
  // Its claim is released below, with the saved state.
  if (entry !== undefined) entry.claimedUntil = 0
  // A run in progress finishes, and its state is not kept.
  if (entry?.busy === true) entry.ended = true
  else if (entry !== undefined) t.live.forget(entry, undefined)
  const saved = t.spill === undefined ? false : await removeSaved(t, key)
  return entry !== undefined || saved
}

/**
 * Claims `key` for this process: held live by another process, it is not ended here (that process's next save
 * would bring it back).
 */
async function claimToEnd<S>(t: TableParts<S>, key: string): Promise<void> {
  const spill = t.spill
  const claim = spill?.claim?.bind(spill)
  if (claim === undefined) return
  const waitMs = t.saves.storeWaitMs
  const claiming = t.order.serial(key, () => claim(key, t.claims.claimMs))
  const claimed = await waitForStore(claiming, { deadline: performance.now() + waitMs })
  if (!claimed.ok) throw new SessionStoreError('unavailable', notes.storeSilent(key, waitMs, 'end'))
  if (claimed.value !== undefined) {
    throw new SessionStoreError('claimed', t.claims.heldElsewhere(key, claimed.value, notes.NOT_ENDED))
  }
}

/** Removes `key`'s saved state and ends the claim on it: whether there was one. */
async function removeSaved<S>(t: TableParts<S>, key: string): Promise<boolean> {
  const spill = t.spill
  if (spill === undefined) return false
  const waitMs = t.saves.storeWaitMs
  const remove = async (): Promise<boolean> => {
    const had = await spill.remove(key)
    await spill.release?.(key).catch(() => undefined)
    return had
  }
  const removed = await waitForStore(t.order.serial(key, remove), { deadline: performance.now() + waitMs })
  if (!removed.ok) throw new SessionStoreError('unavailable', notes.storeSilent(key, waitMs, 'remove'))
  return removed.value
}
