/** What the steps of durable approval share: the store, the runtime, the options, and this process's runs. */
import type { CodeRunResult, CodeRuntime } from '@ptc/sandbox'
import { waitForStore, type SessionStore } from '@ptc/sandbox/session'
import type { AwaitingApproval } from './awaiting.js'

export interface DurableParts {
  /** Where suspended programs wait. */
  readonly store: SessionStore
  /** The runtime that suspends runs, opens their states and drops them. */
  readonly runtime: CodeRuntime
  /** How long a suspended program's state is kept for its decision. */
  readonly ttlMs: number
  /** How long an operation of the store may be waited for. */
  readonly storeWaitMs: number
  /** The runs suspended by the calls of this process, by result: their awaiting value or why none. */
  readonly awaiting: WeakMap<CodeRunResult, AwaitingApproval | Error>
  /** Tokens being resumed in this process (the store drops a token once its state is opened). */
  readonly resuming: Set<string>
  /** When the store was last swept of expired states (`SessionStore.sweep`, now and then). */
  sweptAt: number
}

/** `operation` of the store, waited for at most `storeWaitMs` (and until `signal`, when given). */
export function bounded<T>(
  parts: DurableParts,
  operation: Promise<T>,
  signal?: AbortSignal,
): ReturnType<typeof waitForStore<T>> {
  return waitForStore(operation, { deadline: performance.now() + parts.storeWaitMs, signal })
}
