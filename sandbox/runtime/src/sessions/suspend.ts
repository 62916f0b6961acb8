import { SandboxUsageError } from '../errors.js'
import type { SessionEntry } from './entry.js'
import * as notes from './notes.js'
import type { TableParts } from './parts.js'
import type { StoredRemoval } from './saves.js'
import { SessionStoreError } from './store/errors.js'

/** A session taken out of the table: its state, bytes and runs. */
export interface DetachedSession<S> {
  state: S
  bytes: number
  runs: number
}

/**
 * Takes `key`'s idle session out of the table (see `SessionTable.detach`); `detaching` holds the suspends in
 * progress, which `close` lets end first.
 *
 * From the store's answer to the session leaving the table, no await: a run taking the session in between would
 * run it here while the caller holds its bytes (take.test.ts).
 */
export async function detachSession<S>(
  t: TableParts<S>,
  detaching: Set<Promise<unknown>>,
  key: string,
): Promise<DetachedSession<S> | undefined> {
  const entry = t.live.get(key)
  // None live (an idle save of it may be in progress, and put it back if it fails): nothing is taken out.
  if (entry === undefined) return undefined
  // A failed idle save of an older state must not put that one back once this one is the caller's.
  t.saves.cancelRetry(key)
  refuseBusy(t, entry)
  if (t.spill !== undefined) {
    // Busy meanwhile: no run or save takes it.
    entry.busy = true
    entry.suspending = true
    const removing = t.saves.removeStored(entry)
    detaching.add(removing)
    let outcome: StoredRemoval
    try {
      outcome = await removing
    } finally {
      detaching.delete(removing)
      entry.busy = false
      entry.suspending = false
      entry.lastUsed = Date.now()
    }
    if (!stillHere(t, entry, outcome)) return undefined
  }
  return takeOut(t, entry)
}

/** Throws when `entry` cannot be suspended now: held for a resume, being suspended, running, or lost. */
function refuseBusy<S>(t: TableParts<S>, entry: SessionEntry<S>): void {
  if (entry.parked !== undefined) throw new SandboxUsageError(t.parking.refusal(entry, notes.NOT_SUSPENDED_NOW))
  if (entry.suspending === true || entry.busy) {
    throw new SandboxUsageError(notes.busyForSuspend(entry.key, entry.suspending === true))
  }
  if (entry.claimLost !== undefined) {
    t.live.forget(entry, undefined, false)
    throw new SessionStoreError('claimed', notes.lapsedForSuspend(entry.key))
  }
}

/**
 * After the removal of the copy the store may hold from an earlier idle period: whether the session is still here
 * to take out (not ended meanwhile). Throws when another process holds it now (`claimed`: this process's copy is
 * dropped) or the store failed or did not answer (`unavailable`: the session stays as it was).
 */
function stillHere<S>(t: TableParts<S>, entry: SessionEntry<S>, outcome: StoredRemoval): boolean {
  // Ended meanwhile (endSession): nothing to suspend, whatever the store did.
  if (entry.ended || !t.live.holds(entry)) {
    if (t.live.holds(entry)) t.live.forget(entry, undefined)
    return false
  }
  if (outcome.held !== undefined) {
    entry.claimLost = outcome.held
    t.live.forget(entry, undefined, false)
    throw new SessionStoreError('claimed', outcome.held)
  }
  if (outcome.failure !== undefined) {
    throw new SessionStoreError('unavailable', notes.removalFailed(entry.key, outcome.failure))
  }
  t.saves.forgetSaved(entry.key)
  return true
}

/** `entry` leaves the table, its claim ended: whoever holds the bytes may resume it anywhere. */
function takeOut<S>(t: TableParts<S>, entry: SessionEntry<S>): DetachedSession<S> | undefined {
  t.claims.release(entry)
  t.live.remove(entry.key)
  t.live.stopIfEmpty()
  return entry.state === undefined ? undefined : { state: entry.state, bytes: entry.bytes, runs: entry.runs }
}
