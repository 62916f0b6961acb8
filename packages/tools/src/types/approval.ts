import type { ToolExecution } from './tool.js'

/** Localized approval prompt text; `en` is required. */
export interface DisplayReason {
  readonly en: string
  readonly [locale: string]: string
}

export interface ApprovalRequest {
  exec: ToolExecution
  reason?: string
  displayReason?: DisplayReason
  signal: AbortSignal
}

export type ApprovalOutcome = 'allowed-once' | 'rejected' | 'cancelled' | 'unavailable'

/** Answers `ask` decisions. Only `allowed-once` lets the call proceed. */
export interface ApprovalService {
  request(request: ApprovalRequest): Promise<ApprovalOutcome>
}
