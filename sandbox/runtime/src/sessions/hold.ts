import { createHash } from 'node:crypto'
import type { SessionClaim } from './store/store.js'

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
export function heldForResume(claim: SessionClaim): boolean {
  return claim.holder.startsWith(PARKED_HOLDER_PREFIX)
}
