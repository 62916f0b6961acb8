import type { ToolExecution } from './execution.js'

/** A tool scope. Scopes form a chain (agent -> preset -> ... -> global); identity is the key. */
export interface Scope {
  readonly id: string
  readonly parent?: Scope
}

/** Scopes are keyed by identity. */
export type ScopeKey = Scope

/** An agent: a scope that may own a durable session. */
export interface Agent extends Scope {
  readonly session?: Session
}

/** One durable, ordered session event. */
export interface SessionEvent {
  type: string
  time: number
  turn?: number
  step?: number
  [key: string]: unknown
}

/** A durable, ordered event sink. */
export interface Session {
  append(event: SessionEvent): void | Promise<void>
}

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
