/**
 * The one setup of a program's run, whichever started it: a `run_code` call (`transport.ts`), the resume of a
 * suspended one (`durable/resumed-run.ts`) or a provider-hosted program's batch (`hosted.ts`). Each gets its
 * bindings, its dispatch log and its sub-call scheduler here, from the executor's settings.
 */
import type { CodeRunLimits, CodeRuntime } from '@ptc/sandbox'
import type { ToolExecutorServices, ToolRunContext } from '@ptc/tools'
import { buildBindings, type Binding } from './bindings.js'
import { DispatchLog } from './dispatch-log.js'
import type { LogLimits } from './log-limits.js'
import { SubCallScheduler, type DurableCalls } from './scheduler/scheduler.js'
import type { SubCallNumbering } from './scheduler/sub-call.js'
import { RunTrace, type Tracing } from './tracing.js'

/** The executor's options that shape every program's calls and their log, checked once. */
export interface RunSettings {
  /** Concurrency-safe calls of one program that may overlap (`PtcExecutorOptions.maxParallelSubCalls`). */
  readonly maxParallelSubCalls: number
  /** How long calls told to stop may take to settle before they are abandoned. */
  readonly drainGraceMs: number
  /** What the session log keeps of the calls' values (see `PtcExecutorOptions.logLimits`); `undefined`: all. */
  readonly logLimits: LogLimits | undefined
  /** What the calls' images and deferred contexts may bring along (see `PtcExecutorOptions.maxForwardedChars`). */
  readonly maxForwardedChars: number
  /** How programs are traced (`PtcExecutorOptions.tracing`); absent: not at all. */
  readonly tracing?: Tracing
}

/** What runs a `run_code` program, fresh or resumed: the settings, and the runtime with its limits. */
export interface RunConfig extends RunSettings {
  readonly runtime: CodeRuntime
  /** The executor's limits of every run, over the runtime's own. */
  readonly limits: Partial<CodeRunLimits>
  /** The largest `timeoutMs` a program may ask for: the run's wall ceiling (a resumed run's own is sealed). */
  readonly maxTimeoutMs: number
}

/** How one program's calls differ from the settings' defaults. */
export interface ProgramCalls {
  /** How its sub-call ids are numbered on (default: from 0). */
  readonly numbering?: SubCallNumbering
  /** Default: a deferred approval denies the call. */
  readonly durable?: DurableCalls
  /** The longest JSON text of a call's value (a run's `maxResultChars`; default: the pipeline's). */
  readonly maxValueChars?: number
  /** Where the calls' contexts and conclusions go (default: the program's execution; a long run's stream). */
  readonly context?: ToolRunContext
  /** The program is a span of its own (a `run_code` program, fresh or resumed), if the settings trace. */
  readonly traced?: boolean
}

/** One program's run, set up. */
export interface ProgramRun {
  /** The tools the program may call, frozen as it starts. */
  readonly bindings: ReadonlyMap<string, Binding>
  readonly log: DispatchLog
  readonly scheduler: SubCallScheduler
  /** Its span, ended by whoever set the run up (`RunTrace.end`). */
  readonly trace: RunTrace | undefined
}

/** Sets up the run of `program` (the parent execution of its calls): its bindings, log and scheduler. */
export function setUpRun(
  services: ToolExecutorServices,
  program: ToolRunContext,
  settings: RunSettings,
  calls: ProgramCalls = {},
): ProgramRun {
  const bindings = buildBindings(services, program)
  const trace =
    calls.traced === true && settings.tracing !== undefined ? new RunTrace(settings.tracing, program) : undefined
  const log = new DispatchLog(services, program, program.agent?.session, settings.logLimits, trace)
  const scheduler = new SubCallScheduler({
    services,
    ctx: calls.context ?? program,
    bindings,
    maxParallel: settings.maxParallelSubCalls,
    log,
    drainGraceMs: settings.drainGraceMs,
    maxForwardedChars: settings.maxForwardedChars,
    ...(calls.numbering !== undefined && { numbering: calls.numbering }),
    ...(calls.durable !== undefined && { durable: calls.durable }),
    ...(calls.maxValueChars !== undefined && { maxValueChars: calls.maxValueChars }),
  })
  return { bindings, log, scheduler, trace }
}
