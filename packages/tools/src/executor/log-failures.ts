import { describeThrown, ToolBatchExecutionError } from '../errors.js'
import type { Session } from '../types/scope.js'

/** The first event a session did not take (a failed write, or no confirmation in time). */
export interface LogFailure {
  readonly error: unknown
}

/**
 * Failures to write a call's events that happened outside the batch's own log: an executor that writes a
 * call's sub-dispatch events to the agent's session itself (the PTC executor's dispatch log) reports a failed
 * write here, under the session and the id of the call that returns the outcome; the native executor's batch
 * that returns that call takes it and fails as its own log's failures do (`ToolBatchExecutionError`, the
 * results attached). A session's reports are kept until taken, at most `MAX_REPORTED` of them.
 */
const reported = new WeakMap<Session, Map<string, unknown>>()

/** The most failures kept per session that no batch took (a call returned by no batch: the oldest goes). */
const MAX_REPORTED = 64

/** Reports that some of the events of call `callId` could not be written to `session`. */
export function reportLogFailure(session: Session, callId: string, error: unknown): void {
  let calls = reported.get(session)
  if (calls === undefined) reported.set(session, (calls = new Map()))
  if (!calls.has(callId)) calls.set(callId, error)
  if (calls.size > MAX_REPORTED) calls.delete(calls.keys().next().value as string)
}

/** The failure reported for call `callId` of `session`, if any; taken (a second take finds none). */
export function takeLogFailure(session: Session, callId: string): LogFailure | undefined {
  const calls = reported.get(session)
  if (calls === undefined || !calls.has(callId)) return undefined
  const error = calls.get(callId)
  calls.delete(callId)
  return { error }
}

/** What a batch whose session log failed throws: its results come with the error. */
export function sessionLogFailed(failure: LogFailure, results: readonly unknown[]): ToolBatchExecutionError {
  return new ToolBatchExecutionError(`the session log failed: ${describeThrown(failure.error)}`, results, {
    cause: failure.error,
  })
}
