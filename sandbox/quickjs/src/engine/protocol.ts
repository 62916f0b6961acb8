import type { CodeRunError, CodeRunLimits } from '@ptc/sandbox'
import { wrapSessionSource, type GuestErrorInfo } from '@ptc/sandbox/backend'
import type { SessionMemory } from './session-memory.js'

/** One run as its engines receive it. */
export interface RunInput {
  /**
   * `PreparedProgram.source`, or a session program's body, which the engine's thread wraps
   * (`wrapSessionSource`: a parse of the whole program, kept off the host's thread).
   */
  source: string | { sessionBody: string }
  bindings: readonly string[]
  limits: CodeRunLimits
  /**
   * A session run: it starts from the state `id` names (none: a new session, from the booted image),
   * which `memory` holds (omitted when the engine is known to hold it: `EngineRunOutcome.resident`),
   * and its outcome carries the memory it leaves (`EngineRunOutcome.session`), unless that is more than
   * `maxBytes` (the session's budget: `EngineRunOutcome.sessionOver`).
   */
  session?: { id?: string; memory?: SessionMemory; maxBytes?: number }
  /**
   * A durable run (`CodeRunRequest.durable`): it starts on memory with nothing above the booted state
   * (a session run: on the session's), so that the host's `suspend` can capture exactly this run's
   * memory, unless that is more than `maxBytes` (then the run cannot suspend and ends as `limit`).
   */
  durable?: { maxBytes: number }
  /**
   * A suspended run going on (`source` is then unused): its memory and counters as it suspended. With
   * `session` (a session run that suspended), its outcome carries the memory it leaves, as a session run's.
   */
  resume?: EngineResume
  /**
   * Worker isolation: the host's `performance.timeOrigin + performance.now()` when it posted the run, what
   * the engine's `CPU_DEADLINE` word counts from (both threads' clocks read the same within a fraction of a ms).
   */
  clockBase?: number
}

/** What a suspended run needs to go on in an engine. */
export interface EngineResume {
  memory: SessionMemory
  /** The calls it parked, made again as its first calls. */
  parked: SubCallRequest[]
  cpuMs: number
  subCalls: number
  /** What the output ledger had charged. */
  outputBytes: number
}

/** A durable run that suspended: its memory (the guest waits on the parked calls) and counters. */
export interface EngineSuspension {
  memory: SessionMemory
  /** What the output ledger had charged. */
  outputBytes: number
}

/** One run as the engine sees it (a structured-cloneable message). */
export interface EngineRunInput extends Omit<RunInput, 'source'> {
  /** The program's source, wrapped. */
  source: string
  /**
   * What was left of the run's wall ceiling when the engine took it (the wall clock started at the
   * `run()` call, on the host's thread): the engine run's own deadline is this far from its start.
   */
  wallRemainingMs: number
}

/**
 * `[id, name, argsJson]`: a sub-call the guest started; `argsJson` is the length of an argument text
 * past `maxArgumentChars`, which the engine keeps back (see `heldBackArguments`).
 */
export type SubCallRequest = [id: number, name: string, argsJson: string | number]

/** An engine failure, or a guest error the host formats with the program's positions. */
export type EngineRunError = CodeRunError | { kind: 'syntax' | 'exception'; info: GuestErrorInfo }

/** How an engine run ended. `logs` holds only the entries not yet flushed. */
export interface EngineRunOutcome {
  valueJson?: string
  logs: string[]
  error?: EngineRunError
  cpuMs: number
  subCalls: number
  /** The module trapped or failed its leak check: discard it. */
  broken: boolean
  /** A session run that ended with its engine intact: the memory it leaves for the session's next run. */
  session?: SessionMemory
  /** The engine kept that memory in place (`EngineImage.resident`): the session's next run there may omit it. */
  resident?: string
  /** A session run whose memory was over `session.maxBytes`: how many bytes it changed (nothing was captured). */
  sessionOver?: number
  /** A durable run that suspended (no value, no error). */
  suspended?: EngineSuspension
}

/** Where an engine run reports. `flush` runs after each pump that produced calls or logs. */
export interface EngineRunSink {
  flush(calls: SubCallRequest[], logs: string[]): void
  /**
   * `flush` may run while the guest runs (from inside the engine): the sink only sends (its host is on another
   * thread), so the guest hands its calls over every `HAND_OVER_EVERY` and the host starts them while a burst goes on.
   */
  takesCallsMidRun?: boolean
  /** A log entry the ledger accepted, as it is accepted (before it is flushed). */
  logged?(text: string): void
  done(outcome: EngineRunOutcome): void
}

/**
 * Why the host stops a run in its engine: the run's signal, its wall ceiling, a sub-call cap (`HostCalls`), or
 * its CPU budget, overrun by a guest whose engine did not stop it (see `CPU_DEADLINE`).
 */
export type HostStop = 'abort' | 'wall' | 'limit-calls' | 'limit-pending' | 'limit-args' | 'cpu'

const HOST_STOPS: readonly HostStop[] = ['abort', 'wall', 'limit-calls', 'limit-pending', 'limit-args', 'cpu']

/**
 * The shared control word (index 0) the host writes and the interrupt handler polls: `CONTROL_NONE`,
 * or the stop's `controlOf` value.
 */
export const CONTROL_NONE = 0

/**
 * Index of the word, after the control word, where a worker's engine says how much CPU its run has left, for
 * the host's CPU watchdog: while the guest runs, `1 +` the time, in ms after the run's `clockBase`, at which it
 * overruns its budget; while it does not, `-` the ms of budget left (never above 0). The engine stops the guest
 * itself at its budget, but only where QuickJS polls its interrupt handler: every 10 000 function calls or
 * jumps, which a guest can make seconds apart (a recursion that catches its own stack overflows builds a
 * backtrace of the whole stack for each of them).
 */
export const CPU_DEADLINE = 1

/** The control words of a worker's runs: the control word and `CPU_DEADLINE`. */
export const CONTROL_WORDS = 2

const INT32_MAX = 2 ** 31 - 1

/** The `CPU_DEADLINE` word while the guest runs: it overruns its budget `at` ms after the run's `clockBase`. */
export function cpuDeadlineWord(at: number): number {
  return 1 + Math.max(0, Math.min(INT32_MAX - 1, Math.ceil(at)))
}

/** The `CPU_DEADLINE` word while the guest does not run: `leftMs` of its budget are left. */
export function cpuLeftWord(leftMs: number): number {
  return -Math.max(0, Math.min(INT32_MAX, Math.floor(leftMs)))
}

/**
 * What a `CPU_DEADLINE` word says at `now` (ms after the run's `clockBase`): while the guest runs, `running` and the
 * ms until its budget is spent (below 0 once overrun); while it does not, the ms left.
 */
export function cpuOfWord(word: number, now: number): { readonly running: boolean; readonly ms: number } {
  return word > 0 ? { running: true, ms: word - 1 - now } : { running: false, ms: -word }
}

export function controlOf(reason: HostStop): number {
  return HOST_STOPS.indexOf(reason) + 1
}

/** The stop a control word value holds (`wall` for a value no host writes). */
export function stopOf(control: number): HostStop {
  return HOST_STOPS[control - 1] ?? 'wall'
}

/** Messages host -> worker. */
export type ToWorker =
  | {
      t: 'run'
      runId: number
      input: RunInput & { wallRemainingMs: number }
      /** A buffer of a session memory the host let go of, transferred: a capture may reuse it (`offerSpare`). */
      spare?: ArrayBuffer
    }
  | { t: 'settle'; runId: number; batch: string; count: number }
  | { t: 'stop'; runId: number; reason: HostStop }
  | { t: 'suspend'; runId: number; parked: number }

/** Messages worker -> host. */
export type FromWorker =
  /** `usedPages`: what the worker's boot found (`usedPages` of booted-memory.ts), for the workers spawned after it. */
  | { t: 'ready'; usedPages?: number }
  | { t: 'flush'; runId: number; calls: SubCallRequest[]; logs: string[] }
  | { t: 'done'; runId: number; outcome: EngineRunOutcome }

/** The wrapped source of a run's program (a session body is wrapped here, on the calling thread). */
export function sourceOf(input: RunInput): string {
  if (input.resume !== undefined) return ''
  return typeof input.source === 'string' ? input.source : wrapSessionSource(input.source.sessionBody)
}
