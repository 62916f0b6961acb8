import { whenAborted } from '../pipeline/signal.js'
import type { ToolSchema, UserMessage } from '../types/content.js'
import type { ToolDefinition } from '../types/tool.js'
import type { ToolExecutionResult } from '../types/tool.js'
import type {
  ToolBatchInput,
  ToolBatchResult,
  ToolCallResult,
  ToolDispatchOptions,
  ToolExecutor,
  ToolExecutorServices,
  ToolModelInput,
} from '../types/executor.js'
import type { Session } from '../types/scope.js'
import { RUN_CODE } from '../registry/registration.js'
import { countAbandoned } from './abandoned.js'
import { BoundedDispatch, checkDrainGrace, type BoundedOutcome } from './bounded.js'
import { sessionLogFailed, takeLogFailure } from './log-failures.js'
import { SessionLog } from './session-log.js'
import { parseToolCall, type ParsedToolCall } from './arguments.js'

export interface NativeExecutorOptions {
  /** Cap of the rolling pool of concurrency-safe calls (default 10). */
  maxParallelToolCalls?: number
  /**
   * How long a call that was told to stop (the batch signal aborted, or its
   * body's signal aborted, e.g. by the timeout policy) may take to settle
   * before it is abandoned (default 100 ms). An abandoned call's result is an
   * `isError` `TOOL_TIMEOUT` (a timeout) or `ABORTED`, its `tool/result` event
   * says `abandoned: true`, and its body's eventual outcome is logged as
   * `tool/result-late`. The `run_code` transport bounds its own drain and is
   * never abandoned here. At most `MAX_ABANDONED_BODIES` (256) abandoned bodies
   * of one tool may still be running in the process: past it, calls of that
   * tool fail at once (`TOOL_ERROR`) until some end.
   */
  drainGraceMs?: number
}

/** The default cap of parallel tool calls. */
export const DEFAULT_MAX_PARALLEL_TOOL_CALLS = 10

/**
 * The native executor: every visible tool is declared to the model; a batch's
 * calls are classified at start (only an exact `true` from a valid call's
 * classifier is parallel), consecutive parallel calls share a rolling pool,
 * an exclusive call waits for the pool to drain and runs alone. Results come
 * back in model order, one per call, including calls skipped by an abort.
 */
export function createNativeExecutor(options: NativeExecutorOptions = {}): ToolExecutor {
  const configured = options.maxParallelToolCalls ?? DEFAULT_MAX_PARALLEL_TOOL_CALLS
  if (!Number.isInteger(configured) || configured < 1)
    throw new TypeError('maxParallelToolCalls must be a positive integer')
  const graceMs = checkDrainGrace(options.drainGraceMs)
  return Object.freeze({
    describe(tools: readonly ToolDefinition[]): ToolModelInput {
      return { schemas: tools.map(projectSchema), knownNames: tools.map((t) => t.name) }
    },
    execute(input: ToolBatchInput, services: ToolExecutorServices): Promise<ToolBatchResult> {
      return runBatch(input, services, input.maxParallelToolCalls ?? configured, graceMs)
    },
  })
}

function projectSchema(tool: ToolDefinition): ToolSchema {
  return { name: tool.name, description: tool.description, parameters: structuredClone(tool.parameters) }
}

async function runBatch(
  input: ToolBatchInput,
  services: ToolExecutorServices,
  cap: number,
  graceMs: number,
): Promise<ToolBatchResult> {
  const { calls, signal, agent, toolSet } = input
  const approved = new Set(input.approved ?? [])
  const session: Session | undefined = input.log !== undefined ? agent?.session : undefined
  const log = session === undefined || input.log === undefined ? undefined : new SessionLog(session, input.log)
  const results: (BoundedOutcome | undefined)[] = new Array(calls.length).fill(undefined)
  const running = new Set<Promise<void>>()
  /** Calls that may be abandoned once told to stop. */
  const bounded = new Set<BoundedDispatch>()
  const onAbort = (): void => {
    for (const call of bounded) call.stop(signal.reason)
  }
  let committed = 0

  const commit = (): void => {
    while (committed < calls.length) {
      const outcome = results[committed]
      const call = calls[committed]
      if (outcome === undefined || call === undefined) break
      log?.result(call, outcome.result, outcome.abandoned)
      committed++
    }
  }

  const start = (index: number, prepared: ParsedToolCall): Promise<void> => {
    const { call } = prepared
    log?.call(call)
    const dispatch = (options: ToolDispatchOptions): Promise<ToolExecutionResult> =>
      services.dispatch(
        {
          callId: call.id,
          name: call.name,
          arguments: prepared.args,
          signal,
          ...(agent !== undefined && { agent }),
          ...(toolSet !== undefined && { toolSet }),
        },
        {
          ...options,
          ...(prepared.argumentsError !== undefined && { argumentsError: prepared.argumentsError }),
          ...(approved.has(call.id) && { approved: true }),
        },
      )
    // Called only once the dispatch settled, always after `tracked` is assigned.
    const done = (outcome: BoundedOutcome): void => {
      results[index] = outcome
      commit()
      running.delete(tracked)
    }
    const tracked = new Promise<void>((resolve) => {
      if (call.name === RUN_CODE) {
        // The transport bounds its own drain (its sub-calls are abandoned inside it).
        void dispatch({}).then((result) => (done({ result, abandoned: false }), resolve()))
        return
      }
      // The definition whose abandoned body is counted until it ends (the pipeline refuses a call of a tool with
      // MAX_ABANDONED_BODIES of them still running); looked up only for a call that is abandoned.
      let definition: ToolDefinition | undefined
      const wait = new BoundedDispatch(
        dispatch,
        graceMs,
        (outcome) => {
          if (outcome.abandoned) {
            definition = services.executable(call.name, agent, toolSet)
            if (definition !== undefined) countAbandoned(definition, 1)
          }
          bounded.delete(wait)
          done(outcome)
          resolve()
        },
        (late) => {
          if (definition !== undefined) countAbandoned(definition, -1)
          log?.late(call, late)
        },
      )
      bounded.add(wait)
      if (signal.aborted) wait.stop(signal.reason)
    })
    running.add(tracked)
    return tracked
  }

  const stopWaiting = whenAborted(signal, onAbort)
  try {
    for (let index = 0; index < calls.length; index++) {
      const prepared = parseToolCall(calls[index])
      // A lone call has nothing to overlap with: its classifier need not run.
      const parallel =
        calls.length > 1 &&
        prepared.argumentsError === undefined &&
        services.mode({
          name: prepared.call.name,
          arguments: prepared.args,
          ...(agent !== undefined && { agent }),
          ...(toolSet !== undefined && { toolSet }),
        }).kind === 'parallel'
      if (parallel) {
        while (running.size >= cap) await Promise.race(running)
        void start(index, prepared)
      } else {
        while (running.size > 0) await Promise.race(running)
        await start(index, prepared)
      }
    }
    while (running.size > 0) await Promise.race(running)
  } finally {
    stopWaiting()
  }

  const ordered: ToolCallResult[] = calls.map((call, i) => ({
    callId: call.id,
    result: (results[i] as BoundedOutcome).result,
  }))
  const additionalContexts: UserMessage[] = []
  for (const { result } of ordered)
    if (result.additionalContexts !== undefined) additionalContexts.push(...result.additionalContexts)
  const concluded = ordered.some(({ result }) => !result.isError && result.concludesTurn === true)
  const batch: ToolBatchResult = { results: ordered, additionalContexts, concluded }
  let failure = log === undefined ? undefined : await log.drain()
  // Events another executor wrote for these calls (a run_code program's sub-dispatches), logged or not by this batch.
  if (agent?.session !== undefined) {
    for (const call of calls) {
      const reported = takeLogFailure(agent.session, call.id)
      failure ??= reported
    }
  }
  if (failure !== undefined) {
    throw sessionLogFailed(failure, ordered)
  }
  return batch
}
