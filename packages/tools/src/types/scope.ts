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
