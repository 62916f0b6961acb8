/**
 * Provider-hosted programs: the calls a provider's own code execution makes (Anthropic's programmatic tool
 * calling, OpenAI's `programmatic` callers) reach the host as tool calls marked with their `caller`. Each
 * becomes a parented sub-dispatch of that program, through the same scheduler, pipeline and dispatch log as
 * a `run_code` program's own calls: validation, policy, guards, approval, a log under the program.
 */
import {
  createNativeExecutor,
  type HostedCaller,
  type JsonValue,
  type ToolBatchInput,
  type ToolBatchResult,
  type ToolCallBlock,
  type ToolCallResult,
  type ToolExecutionToken,
  type ToolExecutor,
  type ToolExecutorServices,
  type ToolRunContext,
  type UserMessage,
} from '@ptc/tools'
import {
  checkDrainGrace,
  failureResult,
  parseToolCall,
  sessionLogFailed,
  whenAborted,
  type LogFailure,
} from '@ptc/tools/executor'
import { resolveLogLimits, type LogLimits } from './log-limits.js'
import * as messages from './messages.js'
import { setUpRun, type RunSettings } from './run-setup.js'
import { DEFAULT_MAX_FORWARDED_CHARS } from './scheduler/forwarding.js'
import type { SubCallNumbering } from './scheduler/sub-call.js'

export interface HostedProgramsOptions {
  /** Concurrency-safe calls of one program that may overlap within a batch (default 10). */
  maxParallelSubCalls?: number
  /**
   * How long (ms, default 100) a call told to stop (the batch was aborted, or a timeout wrapper fired) may
   * take to settle before it is abandoned, as for a `run_code` program's calls.
   */
  drainGraceMs?: number
  /**
   * Programs remembered at once (default 10 000), the least recently seen forgotten first. A program's
   * sub-calls are numbered across the batches it spans (`<program id>:ptc:<n>`); a forgotten program seen
   * again numbers from 1 and is logged as a new program.
   */
  maxPrograms?: number
  /**
   * What the session log keeps of the calls' arguments and content (see `PtcExecutorOptions.logLimits`; default
   * `DEFAULT_LOG_LIMITS`).
   */
  logLimits?: Partial<LogLimits> | false
}

/** `HostedProgramsOptions.maxPrograms` when not given. */
const DEFAULT_MAX_PROGRAMS = 10_000

/** What is kept of a hosted program between batches. */
interface HostedProgram {
  readonly token: ToolExecutionToken
  readonly numbering: SubCallNumbering
  /** Its `tool/ptc-program` event was appended. */
  logged: boolean
}

/**
 * An executor that routes the calls a provider-hosted program made (a `ToolCallBlock` with `caller`) as
 * sub-dispatches of that program (`<program id>:ptc:<n>`, numbered across the batches the program spans,
 * `parent` set, so a code-only scope still lets them through), and every other call to `executor`
 * (default: the native executor). The PTC executor does this itself.
 *
 * A batch is cut into runs of consecutive calls with the same caller (a direct call has none); the runs
 * execute one after another, so an exclusive tool never overlaps a call of another run, and results come
 * back in model order, one per call. Within a run the program's scheduler applies: safe calls overlap up
 * to `maxParallelSubCalls`, an exclusive call runs alone, policy stages never overlap. With an agent
 * session, a program's first call appends `tool/ptc-program {callId, name, code?}` and every call logs
 * `tool/ptc-dispatch-start` / `tool/ptc-dispatch` with `parentCallId` the program and `callId` the
 * provider's id of the call, as `run_code`'s sub-calls do (`ptc log` shows them under their program).
 * A hosted call's result is its whole result (content, contexts, conclusion), returned to the provider.
 */
export function withHostedPrograms(
  executor: ToolExecutor = createNativeExecutor(),
  options: HostedProgramsOptions = {},
): ToolExecutor {
  if (typeof executor !== 'object' || executor === null || typeof executor.execute !== 'function')
    throw new TypeError('withHostedPrograms needs a ToolExecutor')
  const maxParallelSubCalls = options.maxParallelSubCalls ?? 10
  if (!Number.isInteger(maxParallelSubCalls) || maxParallelSubCalls < 1)
    throw new TypeError('maxParallelSubCalls must be a positive integer')
  const drainGraceMs = checkDrainGrace(options.drainGraceMs)
  const maxPrograms = options.maxPrograms ?? DEFAULT_MAX_PROGRAMS
  if (!Number.isInteger(maxPrograms) || maxPrograms < 1) throw new TypeError('maxPrograms must be a positive integer')
  const logLimits = resolveLogLimits(options.logLimits)
  // Hosted calls forward nothing (each returns its whole result), so the bound on what they forward is moot.
  const settings = { maxParallelSubCalls, drainGraceMs, logLimits, maxForwardedChars: DEFAULT_MAX_FORWARDED_CHARS }
  return routeHostedPrograms(executor, settings, maxPrograms)
}

/** `withHostedPrograms` with its options checked: the PTC executor's own settings, or the ones given. */
export function routeHostedPrograms(
  executor: ToolExecutor,
  settings: RunSettings,
  maxPrograms = DEFAULT_MAX_PROGRAMS,
): ToolExecutor {
  const programs = new ProgramTable(maxPrograms)

  /** The program's calls' results, and the first event of them the session did not take. */
  const runProgram = async (
    caller: HostedCaller,
    calls: readonly ToolCallBlock[],
    input: ToolBatchInput,
    services: ToolExecutorServices,
  ): Promise<{ results: ToolCallResult[]; logFailure: LogFailure | undefined }> => {
    const program = programs.get(caller.id, input.agent?.id)
    const exec = programExecution(caller, program.token, input)
    const { log, scheduler } = setUpRun(services, exec, settings, { numbering: program.numbering })
    if (!program.logged) {
      program.logged = true
      log.program(caller, input.log)
    }
    // An abort stops the program's calls as a run's end does: queued ones never start, in-flight ones get the grace.
    const stopWaiting = whenAborted(input.signal, () => void scheduler.close(false, messages.BATCH_ABORTED))
    let results: ToolCallResult[]
    let logFailure: LogFailure | undefined
    try {
      const settled = await Promise.all(calls.map((call) => scheduler.dispatch(parseToolCall(call))))
      results = calls.map((call, i) => ({ callId: call.id, result: settled[i] as ToolCallResult['result'] }))
    } finally {
      stopWaiting()
      logFailure = await scheduler.close()
    }
    return { results, logFailure }
  }

  const execute = async (input: ToolBatchInput, services: ToolExecutorServices): Promise<ToolBatchResult> => {
    const runs = runsOf(input.calls)
    if (runs.length === 1 && runs[0]?.caller === undefined) return executor.execute(input, services)
    const results: ToolCallResult[] = []
    const additionalContexts: UserMessage[] = []
    let concluded = false
    let logFailure: LogFailure | undefined
    for (const run of runs) {
      if (run.caller === 'malformed') {
        results.push(
          ...run.calls.map((call) => ({
            callId: typeof call?.id === 'string' ? call.id : '',
            result: malformedCaller(call),
          })),
        )
      } else if (run.caller === undefined) {
        const batch = await executor.execute({ ...input, calls: run.calls }, services)
        results.push(...batch.results)
        additionalContexts.push(...batch.additionalContexts)
        concluded ||= batch.concluded
      } else {
        const program = await runProgram(run.caller, run.calls, input, services)
        logFailure ??= program.logFailure
        const settled = program.results
        results.push(...settled)
        for (const { result } of settled) {
          if (result.additionalContexts !== undefined) additionalContexts.push(...result.additionalContexts)
          concluded ||= !result.isError && result.concludesTurn === true
        }
      }
    }
    // As the native executor does when its log fails: the results come with the error.
    if (logFailure !== undefined) throw sessionLogFailed(logFailure, results)
    return { results, additionalContexts, concluded }
  }

  return Object.freeze({
    ...(executor.sections !== undefined && { sections: executor.sections }),
    ...(executor.codeOnly !== undefined && { codeOnly: executor.codeOnly }),
    ...(executor.transport !== undefined && { transport: executor.transport.bind(executor) }),
    ...(executor.builtins !== undefined && { builtins: executor.builtins }),
    ...(executor.resume !== undefined && { resume: executor.resume.bind(executor) }),
    describe: executor.describe.bind(executor),
    execute,
  } satisfies ToolExecutor)
}

/** A run of consecutive calls with the same caller: a hosted program, none (direct), or a caller that is not one. */
interface CallRun {
  readonly caller: HostedCaller | undefined | 'malformed'
  readonly calls: ToolCallBlock[]
}

function runsOf(calls: readonly ToolCallBlock[]): CallRun[] {
  const runs: CallRun[] = []
  for (const call of calls) {
    const caller = callerOf(call)
    const last = runs.at(-1)
    const same =
      last !== undefined &&
      (typeof caller === 'object' && typeof last.caller === 'object'
        ? caller.id === last.caller.id
        : caller === last.caller)
    if (same) last.calls.push(call)
    else runs.push({ caller, calls: [call] })
  }
  return runs
}

/**
 * The call's hosted caller, undefined for a direct call, 'malformed' for a `caller` that is not `{ type, id }`
 * strings.
 */
function callerOf(call: ToolCallBlock): HostedCaller | undefined | 'malformed' {
  const caller: unknown = typeof call === 'object' && call !== null ? call.caller : undefined
  if (caller === undefined) return undefined
  if (typeof caller !== 'object' || caller === null) return 'malformed'
  const { type, id, code } = caller as Record<string, unknown>
  if (
    typeof type !== 'string' ||
    type === '' ||
    typeof id !== 'string' ||
    id === '' ||
    (code !== undefined && typeof code !== 'string')
  )
    return 'malformed'
  return code === undefined ? { type, id } : { type, id, code }
}

function malformedCaller(call: ToolCallBlock | undefined): ToolCallResult['result'] {
  const name = typeof call?.name === 'string' ? call.name : '?'
  return failureResult('INVALID_ARGS', messages.malformedCaller(name))
}

/**
 * The program as the parent execution of its calls: id and root its own id, name its kind, arguments
 * `{ code }` when known. It has no body of its own here (the provider ran it), so nothing is deferred to it.
 */
function programExecution(caller: HostedCaller, token: ToolExecutionToken, input: ToolBatchInput): ToolRunContext {
  const args: JsonValue = caller.code === undefined ? null : Object.freeze({ code: caller.code })
  return Object.freeze({
    callId: caller.id,
    rootCallId: caller.id,
    name: caller.type,
    arguments: args,
    signal: input.signal,
    token,
    ...(input.agent !== undefined && { agent: input.agent }),
    ...(input.toolSet !== undefined && { toolSet: input.toolSet }),
    // Hosted calls return their whole result (contexts, conclusion) to the batch: nothing reaches these.
    deferContext: () => undefined,
    concludeTurn: () => undefined,
  })
}

/** Hosted programs by agent and id, least recently seen first; bounded. */
class ProgramTable {
  readonly #programs = new Map<string, HostedProgram>()

  constructor(private readonly max: number) {}

  get(id: string, agentId: string | undefined): HostedProgram {
    const key = `${agentId ?? ''}\u0000${id}`
    const program = this.#programs.get(key) ?? {
      token: Symbol(id) as ToolExecutionToken,
      numbering: { count: 0 },
      logged: false,
    }
    this.#programs.delete(key)
    this.#programs.set(key, program)
    if (this.#programs.size > this.max) this.#programs.delete(this.#programs.keys().next().value as string)
    return program
  }
}
