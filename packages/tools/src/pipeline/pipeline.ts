import type { ListenerList } from '../events/listeners.js'
import { emitToObservers } from '../events/emit.js'
import { runWaterfall } from '../events/waterfall.js'
import type { JsonValue } from '../json/types.js'
import { snapshotJson } from '../json/snapshot.js'
import { argumentsNotLossless, programOnlyTool, THROWN_IN, toolGoneBeforeCall, unknownTool } from '../messages.js'
import type { Layers } from '../registry/layers.js'
import type { Registration } from '../registry/registration.js'
import { executableIn } from '../registry/tool-set.js'
import type { UserMessage } from '../types/content.js'
import type { PostToolDecision, PreToolDecision } from '../types/decisions.js'
import type { ToolsEvents } from '../types/events.js'
import type {
  ToolDispatchExecution,
  ToolExecution,
  ToolExecutionInput,
  ToolExecutionResult,
  ToolRunContext,
} from '../types/tool.js'
import type { ToolDispatchOptions } from '../types/executor.js'
import type { ApprovalService } from '../types/approval.js'
import { argumentsProblem } from './arguments.js'
import { Admission, allow } from './admission.js'
import {
  aborted,
  project,
  startCall,
  withContexts,
  type CallRegistration,
  type CallState,
  type DispatchHooks,
} from './call-state.js'
import { normalizePreDecision } from './decisions.js'
import { dispatchView, execution } from './execution.js'
import type { Guards } from './guards.js'
import { catching, noop, watchAbort } from './notifications.js'
import { applyPostDecision, normalizeWrapped, produceValue } from './outcome.js'
import { failureResult, materialize, thrownResult } from './results.js'
import { ownedBy, type Route } from './route.js'
import { fuseSignals } from './signal.js'
import { abandonedRefusal } from '../executor/abandoned.js'

/** The event lists the pipeline reads. */
export interface PipelineListeners {
  readonly preExecute: ListenerList<ToolsEvents['tools/pre-execute']>
  readonly execute: ListenerList<ToolsEvents['tools/execute']>
  readonly postExecute: ListenerList<ToolsEvents['tools/post-execute']>
  readonly result: ListenerList<ToolsEvents['tools/result']>
}

/**
 * The shared execution pipeline: snapshot -> token ->
 * collapse -> pre-aborted -> arguments -> pre-execute (+approval) -> guards -> execute
 * wrappers -> body -> output -> render -> post-execute -> finalizeContent ->
 * materialize + freeze -> tools/result. `dispatch` never rejects.
 */
export class Pipeline {
  readonly #admission: Admission

  constructor(
    private readonly layers: Layers,
    private readonly listeners: PipelineListeners,
    guards: Guards,
    approval: () => ApprovalService | undefined,
  ) {
    this.#admission = new Admission(listeners.preExecute, guards, approval)
  }

  async dispatch(input: ToolExecutionInput, route: Route, options?: ToolDispatchOptions): Promise<ToolExecutionResult> {
    const notify = options?.onPolicySettled
    const onBodyAborted = catching(options?.onBodyAborted)
    const approved = options?.approved === true && input.parent === undefined
    const deferrable = options?.deferrable === true
    const decision =
      options?.decision === 'allowed-once' || options?.decision === 'rejected' ? options.decision : undefined
    const maxValueChars = options?.maxValueChars
    if (notify === undefined)
      return this.#dispatch(input, route, options?.argumentsError, {
        onPolicySettled: undefined,
        onBodyAborted,
        approved,
        deferrable,
        decision,
        maxValueChars,
      })
    let notified = false
    const onPolicySettled = (): void => {
      if (notified) return
      notified = true
      try {
        notify()
      } catch {
        // a scheduler's notification cannot fail the call
      }
    }
    try {
      return await this.#dispatch(input, route, options?.argumentsError, {
        onPolicySettled,
        onBodyAborted,
        approved,
        deferrable,
        decision,
        maxValueChars,
      })
    } finally {
      onPolicySettled()
    }
  }

  async #dispatch(
    input: ToolExecutionInput,
    route: Route,
    argumentsError: string | undefined,
    hooks: DispatchHooks,
  ): Promise<ToolExecutionResult> {
    let args: JsonValue = null
    if (argumentsError === undefined) {
      const snap = snapshotJson(input.arguments)
      if (snap.ok) args = snap.value
      else argumentsError = argumentsNotLossless(snap.message)
    }
    const exec = execution(input, args)
    const direct = exec.parent === undefined
    const owned = ownedBy(route, exec.name, direct)
    if (route.codeOnly && direct && owned === undefined) {
      const message =
        this.#executable(exec) !== undefined
          ? programOnlyTool(exec.name, route.transport?.name ?? 'run_code')
          : unknownTool(exec.name)
      return this.#finish(exec, undefined, failureResult('UNKNOWN_TOOL', message))
    }
    const found = owned ?? this.#executable(exec)
    if (found === undefined) return this.#finish(exec, undefined, failureResult('UNKNOWN_TOOL', unknownTool(exec.name)))
    let call: CallRegistration
    try {
      call = startCall(found)
    } catch (error) {
      return this.#finish(exec, undefined, thrownResult(error, THROWN_IN.definition))
    }
    if (argumentsError !== undefined) return this.#finish(exec, call, failureResult('INVALID_ARGS', argumentsError))
    if (exec.signal.aborted) return this.#finish(exec, call, aborted(false))
    const stuck = abandonedRefusal(found.registered, exec.name)
    if (stuck !== undefined) return this.#finish(exec, call, stuck)
    // The executor's own tools check their arguments with messages of their own.
    const invalid = owned === undefined ? argumentsProblem(found, args) : undefined
    if (invalid !== undefined) return this.#finish(exec, call, failureResult('INVALID_ARGS', invalid))

    let result: ToolExecutionResult
    try {
      result = await this.#run(call, exec, owned !== undefined, hooks)
    } catch (error) {
      // A safety net: every stage contains its own failures, but a hostile value
      // (a decision whose getters throw, …) must still end as one isError result.
      result = thrownResult(error, THROWN_IN.pipeline)
    }
    return this.#finish(exec, call, result)
  }

  /**
   * The end of the pipeline for a call whose body ended elsewhere (a `run_code` program resumed after a
   * deferred approval, in this process or another): projectContent, `tools/post-execute`, the abort
   * check, finalizeContent, materialize and `tools/result`, as a dispatched call gets them. Never rejects.
   */
  async complete(
    input: ToolExecutionInput,
    route: Route,
    candidate: ToolExecutionResult,
  ): Promise<ToolExecutionResult> {
    const snap = snapshotJson(input.arguments)
    const exec = execution(input, snap.ok ? snap.value : null)
    const found = ownedBy(route, exec.name, exec.parent === undefined) ?? this.#executable(exec)
    let call: CallRegistration | undefined
    let result = candidate
    try {
      if (found !== undefined) {
        call = startCall(found)
        result = project(call, exec, result)
        if (this.listeners.postExecute.for(exec.agent).length > 0) result = await this.#post(found, exec, result)
      }
      if (!result.isError && exec.signal.aborted) result = aborted(true)
    } catch (error) {
      result = thrownResult(error, THROWN_IN.pipeline)
    }
    return this.#finish(exec, call, result)
  }

  /**
   * Policy, dispatch and post-execute of an admitted call; the candidate result for `#finish`.
   * Stages without listeners are not awaited: a sub-call from a program crosses this once per call.
   */
  async #run(
    call: CallRegistration,
    exec: ToolExecution,
    owned: boolean,
    hooks: DispatchHooks,
  ): Promise<ToolExecutionResult> {
    const { reg } = call
    const state: CallState = {
      contexts: [],
      concluded: false,
      settled: false,
      bodyInvoked: false,
      onBodyAborted: hooks.onBodyAborted,
      maxValueChars: hooks.maxValueChars,
    }
    const admitted = this.#admission.admit(exec, hooks)
    const denied = admitted instanceof Promise ? await admitted : admitted
    hooks.onPolicySettled?.()
    if (denied !== undefined) return denied

    let result: ToolExecutionResult
    try {
      const wrappers = this.listeners.execute.for(exec.agent)
      let wrapped: ToolExecutionResult
      if (wrappers.length === 0) {
        // Without wrappers nobody can replace the signal: the frozen execution serves as its own view.
        wrapped = await this.#body(reg, exec, exec as ToolDispatchExecution, state, owned)
      } else {
        const dispatchExec = dispatchView(exec)
        wrapped = await runWaterfall(wrappers, [dispatchExec] as const, () =>
          this.#body(reg, exec, dispatchExec, state, owned),
        )
      }
      result = wrapped === state.bodyResult ? wrapped : normalizeWrapped(reg, exec, wrapped, state.maxValueChars)
    } catch (error) {
      result = thrownResult(error, THROWN_IN.executeWrapper)
    }
    result = project(call, exec, withContexts(result, state))
    if (this.listeners.postExecute.for(exec.agent).length > 0)
      result = await this.#post(reg, exec, result, state.maxValueChars)
    if (!result.isError && exec.signal.aborted) result = aborted(state.bodyInvoked)
    return result
  }

  /**
   * What the `tools/pre-execute` waterfall decides for a call, without running it: the decision `dispatch`
   * would apply (before approval and guards), `allow` when no listener objects. A throwing listener, or
   * arguments that are not lossless JSON or do not match the tool's parameters, give `allow`: `dispatch`
   * answers those itself. The listeners run again when the call is dispatched.
   */
  async preflight(input: ToolExecutionInput): Promise<PreToolDecision> {
    const snap = snapshotJson(input.arguments)
    if (!snap.ok) return allow()
    const exec = execution(input, snap.value)
    const found = this.#executable(exec)
    if (found !== undefined && argumentsProblem(found, snap.value) !== undefined) return allow()
    const listeners = this.listeners.preExecute.for(exec.agent)
    if (listeners.length === 0) return allow()
    try {
      return normalizePreDecision(await runWaterfall(listeners, [exec] as const, allow))
    } catch {
      return allow()
    }
  }

  /** The innermost step of `tools/execute`: re-fuse the caller signal, run the body, check and render its value. */
  async #body(
    reg: Registration,
    exec: ToolExecution,
    dispatchExec: ToolDispatchExecution,
    state: CallState,
    owned: boolean,
  ): Promise<ToolExecutionResult> {
    if (!owned && this.#executable(exec) !== reg) {
      return failureResult('UNKNOWN_TOOL', toolGoneBeforeCall(exec.name))
    }
    const fused = fuseSignals(exec.signal, dispatchExec.signal)
    const context: ToolRunContext = Object.freeze({
      ...exec,
      signal: fused.signal,
      deferContext(message: UserMessage): void {
        if (!state.settled) state.contexts.push(message)
      },
      concludeTurn(): void {
        if (!state.settled) state.concluded = true
      },
    })
    state.bodyInvoked = true
    const unwatch = fused.signal === exec.signal ? noop : watchAbort(fused.signal, state.onBodyAborted)
    let raw: unknown
    try {
      raw = await reg.definition.execute(exec.arguments, context)
    } catch (error) {
      return (state.bodyResult = thrownResult(error))
    } finally {
      state.settled = true
      unwatch()
      fused.release()
    }
    return (state.bodyResult = produceValue(reg, exec, raw, state.concluded, state.maxValueChars))
  }

  async #post(
    reg: Registration,
    exec: ToolExecution,
    result: ToolExecutionResult,
    maxValueChars?: number,
  ): Promise<ToolExecutionResult> {
    const listeners = this.listeners.postExecute.for(exec.agent)
    if (listeners.length === 0) return result
    let decision: PostToolDecision
    try {
      decision = await runWaterfall(listeners, [exec, Object.freeze({ ...result })] as const, accept)
    } catch (error) {
      return thrownResult(error, THROWN_IN.postExecute)
    }
    try {
      return applyPostDecision(reg, exec, result, decision, maxValueChars)
    } catch (error) {
      return thrownResult(error, THROWN_IN.postDecision)
    }
  }

  /** finalizeContent exactly once, materialize + freeze, then `tools/result`. */
  #finish(
    exec: ToolExecution,
    call: CallRegistration | undefined,
    candidate: ToolExecutionResult,
  ): ToolExecutionResult {
    let result = materialize(candidate)
    const finalize = call?.finalizeContent
    if (finalize !== undefined) {
      try {
        const content = finalize.call(call?.reg.definition, exec, result)
        if (content !== undefined) result = materialize({ ...result, content })
      } catch (error) {
        result = materialize(thrownResult(error, THROWN_IN.finalizeContent))
      }
    }
    emitToObservers(this.listeners.result.for(exec.agent), [exec, result])
    return result
  }

  #executable(exec: ToolExecution): Registration | undefined {
    return executableIn(this.layers, exec.name, exec.agent, exec.toolSet)
  }
}

const accept = (): PostToolDecision => ({ kind: 'accept' })
