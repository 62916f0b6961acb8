/**
 * A resumed program's run: set up as any program's, it makes the calls it waited on again with the decisions,
 * goes on where it waited, and its outcome is the `run_code` call's, told to that call's listeners.
 */
import { SandboxUsageError, type CodeRunResult, type CodeRuntime, type JsonValue } from '@ptc/sandbox'
import { SessionStoreError, type ResumeRunRequest } from '@ptc/sandbox/session'
import {
  RUN_CODE,
  type ToolBatchResult,
  type ToolExecutionResult,
  type ToolExecutionToken,
  type ToolExecutorServices,
  type ToolResumeInput,
  type ToolRunContext,
  type UserMessage,
} from '@ptc/tools'
import { failureResult, sessionLogFailed, type LogFailure } from '@ptc/tools/executor'
import { answered } from '../answered.js'
import type { DispatchLog } from '../dispatch-log.js'
import { CodeRunFailedError } from '../errors.js'
import { setUpRun, type RunConfig } from '../run-setup.js'
import type { HeldState } from './held-state.js'
import type { RunIdentity } from './identity.js'
import type { OpenedRun } from './open.js'
import type { DurableParts } from './parts.js'
import * as refusals from './refusals.js'
import { RemovalGate } from './removal-gate.js'
import { awaitingValue, beginRun, storeSuspension } from './suspend.js'

/** One call of `ToolsService.resume`, with what the executor gives it. */
export interface ResumeCall {
  readonly input: ToolResumeInput
  readonly services: ToolExecutorServices
  readonly config: RunConfig
  /** The content of a `run_code` value (`runCodeContent`). */
  readonly content: (value: JsonValue) => ToolExecutionResult['content']
}

/** The resumed program's execution: the `run_code` call it belongs to, in the resume's scope. */
interface ResumedProgram {
  readonly ctx: ToolRunContext
  /** What its calls deferred, for the resume's batch result. */
  readonly contexts: UserMessage[]
  /** Whether one of its calls concluded the turn. */
  concluded: boolean
}

export async function runResumed(
  parts: DurableParts,
  call: ResumeCall,
  opened: OpenedRun,
  held: HeldState,
): Promise<ToolBatchResult> {
  const { input, services, config } = call
  const { run: suspended, identity, decisions, expiresAt } = opened
  const program = resumedProgram(identity, input)
  const numbering = { count: identity.subCalls }
  const { log, scheduler, trace } = setUpRun(services, program.ctx, config, {
    traced: true,
    numbering,
    // No early bound on values: the run's limits are sealed in its state; the sandbox applies its maxResultChars.
    durable: { deferrable: true, decisions: [...decisions] },
  })
  let run: CodeRunResult | undefined
  let thrown: unknown
  try {
    // Logged as going on once it does: its first call, or its end; a runtime that refuses it ran nothing.
    let wentOn = (_: boolean): void => undefined
    log.resumed(suspended.key, decisions, new Promise<boolean>((resolve) => (wentOn = resolve)))
    const next = beginRun(parts, program.ctx, numbering)
    const removeLeased = held.holding === 'leased' ? (stops: boolean) => held.removeLeased(stops, expiresAt) : undefined
    const gate = new RemovalGate(removeLeased, input.signal)
    let logFailure: LogFailure | undefined
    try {
      const submit: ResumeRunRequest['call'] = async (name, args) => {
        wentOn(true)
        await gate.beforeCall()
        return scheduler.submit(name, args)
      }
      run = await answered(
        (config.runtime.resumeRun as NonNullable<CodeRuntime['resumeRun']>)(suspended, {
          call: submit,
          signal: gate.signal,
          durable: next,
        }),
        config.maxTimeoutMs,
        config.runtime.name,
      )
      wentOn(true)
      const removing = gate.atEnd()
      if (removing !== undefined) await removing
    } catch (error) {
      // resumeRun throws only before the program goes on (misuse, a disposed runtime, a session store that failed
      // to give it its session): its state is not lost.
      const refused =
        error instanceof SandboxUsageError || (error instanceof SessionStoreError && error.code === 'unavailable')
      wentOn(!refused)
      // A runtime that refuses to resume at all (disposed: a harness shutting down) ran nothing: the state goes back.
      if (refused) await held.putBack(expiresAt).catch(() => undefined)
      throw error
    } finally {
      gate.end()
      logFailure = await scheduler.close(run?.error?.kind === 'timeout')
    }
    if (gate.unconfirmed) throw refusals.stateNotRemoved(suspended.key, parts.storeWaitMs)
    logFailure = (await storeSuspension(parts, run, next.key, log)) ?? logFailure
    return await answer(call, program, identity, resumedResult(parts, run, call.content), log, logFailure)
  } catch (error) {
    thrown = error
    throw error
  } finally {
    trace?.end(run, thrown)
  }
}

/** The execution of the program of `identity`, resumed by `input`. */
function resumedProgram(identity: RunIdentity, input: ToolResumeInput): ResumedProgram {
  const contexts: UserMessage[] = []
  const program: ResumedProgram = {
    contexts,
    concluded: false,
    ctx: Object.freeze({
      callId: identity.callId,
      rootCallId: identity.rootCallId,
      name: RUN_CODE,
      arguments: identity.arguments ?? {},
      token: Symbol(identity.callId) as ToolExecutionToken,
      signal: input.signal,
      ...(input.agent !== undefined && { agent: input.agent }),
      ...(input.toolSet !== undefined && { toolSet: input.toolSet }),
      deferContext: (message: UserMessage) => void contexts.push(message),
      concludeTurn: () => void (program.concluded = true),
    }),
  }
  return program
}

/** The resumed run's outcome as `run_code` gives it: the value of its end, or of its next suspension. */
function resumedResult(parts: DurableParts, run: CodeRunResult, content: ResumeCall['content']): ToolExecutionResult {
  try {
    const value = run.suspended !== undefined ? awaitingValue(parts, run) : ended(run)
    return { isError: false, value: value as JsonValue, content: content(value as JsonValue) }
  } catch (error) {
    return failureResult('CODE_RUN_FAILED', error instanceof Error ? error.message : String(error))
  }
}

/**
 * The resume's batch result. The listeners of the original call see its resumed outcome as they saw its first
 * one; a session log that failed fails the batch, the results coming with the error.
 */
async function answer(
  { input, services }: ResumeCall,
  program: ResumedProgram,
  identity: RunIdentity,
  outcome: ToolExecutionResult,
  log: DispatchLog,
  logged: LogFailure | undefined,
): Promise<ToolBatchResult> {
  let logFailure = logged
  const result = await services.complete(
    {
      callId: identity.callId,
      rootCallId: identity.rootCallId,
      name: RUN_CODE,
      arguments: program.ctx.arguments,
      signal: input.signal,
      ...(input.agent !== undefined && { agent: input.agent }),
      ...(input.toolSet !== undefined && { toolSet: input.toolSet }),
    },
    outcome,
  )
  if (input.log !== undefined) {
    log.resumedResult(result, input.log)
    logFailure = (await log.drain()) ?? logFailure
  }
  const results = [{ callId: identity.callId, result }]
  if (logFailure !== undefined) throw sessionLogFailed(logFailure, results)
  return { results, additionalContexts: program.contexts, concluded: program.concluded && !result.isError }
}

/** The value of an ended run, as `run_code` gives it; its failure thrown as `CodeRunFailedError`. */
function ended(run: CodeRunResult): JsonValue {
  if (run.error !== undefined) throw new CodeRunFailedError(run.error.kind, run.error.message, run.logs)
  return { logs: run.logs, ...(run.value !== undefined && { result: run.value }) }
}
