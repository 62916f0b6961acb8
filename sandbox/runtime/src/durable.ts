/**
 * Durable runs (`CodeRunRequest.durable`): the types of a run that suspends on parked calls and resumes,
 * exported with `parkCall` from `@ptc/sandbox/session` (what a harness that suspends runs needs).
 */
import type { JsonValue } from './json-value.js'

/** A sub-call a suspended run waits on (see `CodeRunRequest.durable`). */
export interface ParkedCall {
  readonly name: string
  readonly args: JsonValue
  /** What the host gave `parkCall`. */
  readonly detail?: JsonValue
}

/** A run that suspended (see `CodeRunRequest.durable`). */
export interface SuspendedRunState {
  /** Sealed (authenticated, compressed) state: engine memory and the host's counters. */
  readonly state: Uint8Array
  /** The calls it waits on, in the order they were made. */
  readonly parked: readonly ParkedCall[]
}

/** A suspended run opened by `CodeRuntime.openRun`, ready for `resumeRun`. */
export interface SuspendedRun {
  readonly key: string
  readonly data?: JsonValue
  readonly parked: readonly ParkedCall[]
  /** The log entries of the run before it suspended, in order. */
  readonly logs: readonly string[]
}

/** How a suspended run goes on: its program, bindings and limits are those it suspended with. */
export interface ResumeRunRequest {
  /**
   * As `CodeRunRequest.call`. The parked calls are made again first, in their order, through it (each
   * as its own call), before the program runs again.
   */
  call(name: string, args: JsonValue, signal: AbortSignal): Promise<JsonValue>
  signal?: AbortSignal
  onLog?(text: string): void
  /** The key (and data) of the run's next suspension, if it parks again; default: the same key and data. */
  durable?: DurableRun
}

/** What binds a durable run's suspension (`CodeRunRequest.durable`). */
export interface DurableRun {
  /** 1 to 256 characters: the state is sealed under it, and opens only with it. */
  key: string
  /** The host's own data to seal with the state, read as the run suspends (a lossless JSON value). */
  data?(): JsonValue
  /**
   * A session run (`CodeRunRequest.session`) that suspends holds its session this long (ms) for its resume:
   * meanwhile the session runs no other program (in any process sharing its claims' store) and cannot be
   * ended; once it passes unresumed, the session goes on from its state before the run. Default: 7 days.
   * A resume takes the session back and its end leaves the session its state, as a session run's.
   */
  holdMs?: number
}
