import type { DisplayReason, ToolExecution } from './tool.js'

export type { DisplayReason }

export interface ApprovalRequest {
  exec: ToolExecution
  reason?: string
  displayReason?: DisplayReason
  signal: AbortSignal
}

/**
 * `deferred`: the decision comes later (a person answers in an hour, after a restart). A sub-call of a
 * `run_code` program that can suspend (`createPtcExecutor({ durable })` on QuickJS) then waits: the run
 * suspends and `ToolsService.resume(token, decision)` continues it; any other call is denied.
 */
export type ApprovalOutcome = ApprovalAnswer | ApprovalVerdict

/** The answers an approval service may give. */
export type ApprovalAnswer = 'allowed-once' | 'rejected' | 'cancelled' | 'unavailable' | 'deferred'

/**
 * An answer with who or what gave it (`'you, at the prompt'`, `'--approve no'`, `'the approval service of
 * ptc.config.ts'`): the model is told that a call was rejected by it, instead of by "the approval service".
 */
export interface ApprovalVerdict {
  readonly outcome: ApprovalAnswer
  readonly by: string
}

/** A decision given later, for a call whose approval was deferred. */
export type ApprovalDecision = 'allowed-once' | 'rejected'

/** Answers `ask` decisions. Only `allowed-once` lets the call proceed. */
export interface ApprovalService {
  request(request: ApprovalRequest): Promise<ApprovalOutcome>
}
