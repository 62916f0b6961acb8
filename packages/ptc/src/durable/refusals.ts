/**
 * Why `ToolsService.resume` refused a token, as the `ResumeError`s its caller (a harness, a person deciding)
 * reads. Nothing stored was changed then.
 */
import { SessionStoreError } from '@ptc/sandbox/session'
import { ResumeError } from '../errors.js'
import { shownToken } from './token.js'

/** What a resume waited on the store for, as its refusal says it. */
export type StoreStep =
  | 'to let this process resume'
  | 'to give the state of'
  | 'for the state of'
  | 'to remove the state of'

/** This process is resuming `token` already. */
export function resumingHere(token: string): ResumeError {
  return new ResumeError('IN_PROGRESS', `the program of token ${token} is being resumed already`)
}

/** Another process holds the claim of `token`'s resume. */
export function resumingElsewhere(token: string): ResumeError {
  return new ResumeError('IN_PROGRESS', `the program of token ${shownToken(token)} is being resumed by another process`)
}

/** The store did not answer within `storeWaitMs` for `step`. */
export function storeSilent(token: string, storeWaitMs: number, step: StoreStep): ResumeError {
  return new ResumeError(
    'STORE_UNAVAILABLE',
    `the store did not answer within ${storeWaitMs} ms ${step} token ${token}; try again later`,
  )
}

/**
 * The store threw, at once or later, for `step`: no raw error of the resume. A token it cannot take as a key is
 * no token of it, an entry it cannot read a state refused, any other failure a store that could not answer.
 */
export function storeFailed(token: string, error: unknown, step: StoreStep): ResumeError {
  const why = error instanceof Error ? error.message : String(error)
  if (error instanceof SessionStoreError && error.code === 'invalid-key') {
    return new ResumeError(
      'UNKNOWN_TOKEN',
      `no suspended program has token ${shownToken(token)}: it cannot be one (${why})`,
      { cause: error },
    )
  }
  if (error instanceof SessionStoreError && error.code === 'corrupt-entry') {
    return new ResumeError('STATE_REFUSED', `the state of token ${shownToken(token)} cannot be read: ${why}`, {
      cause: error,
    })
  }
  return new ResumeError(
    'STORE_UNAVAILABLE',
    `the store failed ${step} token ${shownToken(token)}: ${why}; try again later`,
    { cause: error },
  )
}

/** The store has no state under `token`. */
export function unknownToken(token: string): ResumeError {
  return new ResumeError(
    'UNKNOWN_TOKEN',
    `no suspended program has token ${JSON.stringify(token)}: unknown, expired or already resumed`,
  )
}

/** The runtime refused to open the state (tampered, sealed with another secret, ...). */
export function stateRefused(token: string, error: unknown): ResumeError {
  const why = error instanceof Error ? error.message : String(error)
  return new ResumeError('STATE_REFUSED', `the state of token ${token} was refused (it stays stored): ${why}`, {
    cause: error,
  })
}

/** The opened state does not say which `run_code` call it belongs to. */
export function namesNoCall(token: string): ResumeError {
  return new ResumeError('STATE_REFUSED', `the state of token ${token} does not name the run_code call it belongs to`)
}

/** The program ran for `owner` (null or absent: no agent), and `agent` may not resume it. */
export function wrongAgent(token: string, owner: string | null | undefined, agent: string | null): ResumeError {
  const ranFor = owner === null || owner === undefined ? 'no agent' : `agent ${JSON.stringify(owner)}`
  const not = agent === null ? 'a call without an agent' : `agent ${JSON.stringify(agent)}`
  return new ResumeError(
    'WRONG_AGENT',
    `the program of token ${token} ran for ${ranFor}; only it may resume it, not ${not}`,
  )
}

/** A list of decisions whose length is not the number of calls the program waits on. */
export function decisionCount(parked: number, given: number): ResumeError {
  return new ResumeError(
    'BAD_DECISION',
    `the program waits on ${parked} call(s): give one decision, or ${parked}, not ${given}`,
  )
}

/** Something that is no decision. */
export function notADecision(decision: unknown): ResumeError {
  return new ResumeError(
    'BAD_DECISION',
    "a decision is 'allowed-once' or 'rejected' (or an array of them, one per waiting call), " +
      `not ${JSON.stringify(decision)}`,
  )
}

/** The store did not confirm it removed a leased state as its program went on: the program was stopped. */
export function stateNotRemoved(token: string, storeWaitMs: number): ResumeError {
  return new ResumeError(
    'STORE_UNAVAILABLE',
    `the store did not confirm within ${storeWaitMs} ms that it removed the state of token ${shownToken(token)}, ` +
      'so the program was stopped before its first call: its state stays stored (written back if the store ' +
      'removes it late); try again later',
  )
}
