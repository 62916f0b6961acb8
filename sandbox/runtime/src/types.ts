import type { DurableRun, ResumeRunRequest, SuspendedRun, SuspendedRunState } from './durable.js'
import type { JsonValue } from './json-value.js'

/**
 * The runtime seam. A backend runs one program with a set of
 * binding names and a host `call` function, under limits, and returns a result.
 * It knows nothing about tools.
 */

export type { JsonValue } from './json-value.js'

/** Why a run failed. */
export type CodeRunFailureKind =
  | 'syntax'
  | 'exception'
  | 'timeout'
  | 'memory'
  | 'abort'
  | 'invalid-output'
  | 'output-limit'
  | 'limit'
  | 'crash'

/** Resource limits of one run. Defaults: see `DEFAULT_LIMITS`. */
export interface CodeRunLimits {
  /** Guest execution time only; time waiting on the host is not charged. */
  cpuMs: number
  /** Hard wall-clock ceiling, enforced even inside a long native builtin. */
  wallMs: number
  /**
   * Hard memory ceiling of the guest. The argument text of the sub-calls the host holds (until each settles)
   * is bounded by it too: past it the run ends as `limit`.
   */
  memoryBytes: number
  /**
   * One ledger for logs and the completion value, exact to the UTF-8 byte. A failure's message is cut to this
   * many bytes too (`withinOutputBudget`): the program can make it as long as its memory allows.
   */
  maxOutputBytes: number
  /** Total sub-calls a run may start. */
  maxSubCalls: number
  /** Sub-calls that may be pending at once. */
  maxPendingSubCalls: number
  /**
   * The largest program text accepted, in UTF-8 bytes, checked before any host-side work (stripping,
   * queueing). A longer program ends at once with a `limit` failure.
   */
  maxProgramBytes: number
  /**
   * The longest JSON text of one sub-call's result the program receives, in UTF-16 units (characters):
   * a longer result rejects that call (the program gets a `ToolCallError`), before the host renders,
   * logs or sends it. Each character of a result costs the host thread work (checks, log, copy: about
   * 60 ns); this bounds that work per call. Default 16 Mi. A result never exceeds `memoryBytes` either.
   */
  maxResultChars: number
  /**
   * The longest JSON text of one sub-call's arguments the host takes, in UTF-16 units (characters): a
   * longer one rejects that call in the program (a `ToolCallError`, code `INVALID_ARGS`) before the host
   * parses, checks or logs it; the tool is not called. The same host-thread work per character as a
   * result's. Default 16 Mi. (The argument text of all calls the host holds at once is bounded by
   * `memoryBytes`: past that the run stops, `limit`.)
   */
  maxArgumentChars: number
}

/** One program run. */
export interface CodeRunRequest {
  /** Body of an async function; top-level `await` and `return` work. */
  code: string
  /** Default `'typescript'` (erasable syntax only). */
  language?: 'typescript' | 'javascript'
  /** The names under the guest's `tools` object. */
  bindings: readonly string[]
  /**
   * Host side of one sub-call. A rejection becomes `ToolCallError(name, message)`
   * in the guest; the signal aborts when the run ends while the call is in flight.
   *
   * Ownership: `args` is a fresh parse of the guest's argument text, made for this
   * call alone (plain objects, dense arrays, JSON primitives; nothing else holds a
   * reference to it). The callee owns it and may keep, freeze or mutate it without
   * copying. Every backend keeps this contract (`settleHostCall` does it for them).
   */
  call(name: string, args: JsonValue, signal: AbortSignal): Promise<JsonValue>
  limits?: Partial<CodeRunLimits>
  signal?: AbortSignal
  /**
   * Called with each log entry as it reaches the host and fits the output ledger, in order: exactly the
   * entries of `CodeRunResult.logs`, each once, the last ones possibly only as the run ends. For a
   * caller that shows output while the program runs. A throw is ignored.
   */
  onLog?(text: string): void
  /**
   * A sandbox session key: the program runs on the state the session's previous program left (its
   * top-level declarations and what it put on `globalThis`) and leaves its own for the next one.
   * Without it, the run starts from nothing. Only a runtime with `endSession` takes it; a session
   * runs one program at a time. 1 to 256 characters.
   */
  session?: string
  /**
   * A resumable run (on a runtime with `resumeRun`): `call` may park a sub-call by rejecting with
   * `parkCall(detail)` (for a decision the host waits for, such as an approval). Once every other call
   * has settled and the program waits only on parked calls, the run suspends: its result has no value
   * or error but `suspended`, the sealed state, bound to `key`, that `openRun` and `resumeRun` continue
   * (here, or in another process of the same build with the same secret). `data()` is called as the run
   * suspends; what it returns is sealed with the state and handed back by `openRun`. Without `durable`,
   * a parked call is an ordinary rejection. With `session`, the suspension holds the session (its state
   * and this run's go with the suspended run) until the run is resumed or `durable.holdMs` passes.
   */
  durable?: DurableRun
  /**
   * Who the run is for (an agent's id, a user's): runs with the same key share one queue, and a runtime whose
   * places are all taken serves the queues of its tenants in turn, so one tenant that floods it with programs
   * delays another's by about one run, not by its whole backlog. Absent (or empty): the one shared tenant.
   */
  tenant?: string
}

/** The failure of a run, as data. */
export interface CodeRunError {
  kind: CodeRunFailureKind
  message: string
}

/** The outcome of a run. `run()` resolves with it for every guest behaviour. */
export interface CodeRunResult {
  /** The program's completion value; absent when it returned `undefined` or failed. */
  value?: JsonValue
  logs: string[]
  error?: CodeRunError
  stats: CodeRunStats
  /** A session run: what became of the session. */
  session?: CodeRunSessionInfo
  /** A durable run that suspended on parked calls (no `value`, no `error`). */
  suspended?: SuspendedRunState
}

/** What a session run did to its session. */
export interface CodeRunSessionInfo {
  readonly key: string
  /** The run started from nothing: the session is new, or its state had expired or been dropped (`note` says which). */
  readonly fresh: boolean
  /** The state this run left is the session's now; otherwise the session keeps what it had before (`note` says why). */
  readonly kept: boolean
  /** Bytes of state the session holds after this run. */
  readonly bytes: number
  /** Programs the session has run (this one included). */
  readonly runs: number
  readonly note?: string
}

/** What a run cost. */
export interface CodeRunStats {
  /** Guest execution time. */
  cpuMs: number
  /** From the `run()` call to its result: queueing and preparation included. */
  wallMs: number
  /** The share of `wallMs` spent before the guest started: preparing the program and waiting for an engine. */
  queueMs: number
  /** Sub-calls the program started. */
  subCalls: number
}

/** A sandbox backend. */
export interface CodeRuntime {
  /** `'quickjs'`, `'isolated-vm'`, … */
  readonly name: string
  /**
   * The limits of this runtime's runs when a request sets none: its options over `DEFAULT_LIMITS`,
   * resolved. A transport caps what a program may ask for (e.g. `run_code`'s `timeoutMs`) by them.
   */
  readonly limits: Readonly<CodeRunLimits>
  /** Rejects only on misuse (bad bindings, disposed runtime); guest failures are results. */
  run(request: CodeRunRequest): Promise<CodeRunResult>
  /**
   * Drops a sandbox session's state (present on runtimes that keep sessions: `CodeRunRequest.session`).
   * Resolves whether the session existed; a run of it in progress finishes, and its state is not kept.
   * With a session store shared by several processes, throws `SessionStoreError` `claimed` while another
   * process holds the session (nothing is dropped).
   */
  endSession?(key: string): Promise<boolean>
  /**
   * Takes an idle session out of the runtime as sealed bytes (authenticated, bound to the build and the
   * key), undefined when it has no state; present on runtimes that can suspend (QuickJS). With a session
   * store, the copy it holds from an earlier idle period is removed first: a later run of the key starts fresh
   * (the bytes are the session). Throws `SessionStoreError` `unavailable`, the session left as it was, when the
   * store fails or does not answer, and `claimed` when another process sharing the store took the session.
   */
  suspendSession?(key: string): Promise<Uint8Array | undefined>
  /**
   * Makes bytes from `suspendSession` (this process or another of the same build) the session `key`;
   * throws, changing nothing, for bytes that are tampered with, truncated or foreign.
   */
  resumeSession?(key: string, snapshot: Uint8Array): Promise<void>
  /**
   * Opens the state of a suspended run (`CodeRunResult.suspended.state`, from this process or another
   * of the same build with the same secret): throws `SnapshotError` (`@ptc/sandbox/session`) for bytes
   * tampered with, truncated, foreign or bound to another key. Present on runtimes that can suspend runs.
   */
  openRun?(key: string, state: Uint8Array): Promise<SuspendedRun>
  /**
   * Continues an opened run where it suspended (each opened run once); resolves with its outcome, as `run`.
   * Throws, having run nothing, on misuse and when the session store fails to give a session run its session
   * back (`SessionStoreError` `unavailable`: the session stays held; open the state again to retry).
   */
  resumeRun?(run: SuspendedRun, request: ResumeRunRequest): Promise<CodeRunResult>
  /**
   * Drops an opened run instead of resuming it (its state could not be kept, or its decision will never
   * come): the sandbox session it held (`CodeRunRequest.session`), here or in the session store, goes on from
   * its state before the run. Each opened run once, as `resumeRun`.
   */
  dropRun?(run: SuspendedRun): Promise<void>
  /** Aborts live runs and waits for them. */
  dispose(): Promise<void>
  [Symbol.asyncDispose](): Promise<void>
}
