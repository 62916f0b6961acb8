import type { ListenerList } from '../events/listeners.js'
import { emitToObservers } from '../events/emit.js'
import { runWaterfall } from '../events/waterfall.js'
import type { JsonValue } from '../json/types.js'
import { snapshotJson } from '../json/snapshot.js'
import type { Layers } from '../registry/layers.js'
import type { Registration } from '../registry/registration.js'
import { executableIn } from '../registry/tool-set.js'
import type { UserMessage } from '../types/content.js'
import type { PostToolDecision, PreToolDecision } from '../types/decisions.js'
import type { ToolDefinition } from '../types/tool.js'
import type { ToolsEvents } from '../types/events.js'
import type {
  ToolDispatchExecution,
  ToolExecution,
  ToolExecutionInput,
  ToolExecutionResult,
  ToolExecutionToken,
  ToolRunContext,
} from '../types/tool.js'
import type { ToolDispatchOptions } from '../types/executor.js'
import type { ApprovalDecision, ApprovalService } from '../types/approval.js'
import { argumentsProblem } from './arguments.js'
import { decideApproval, normalizePreDecision } from './decisions.js'
import type { Guards } from './guards.js'
import { applyPostDecision, normalizeWrapped, produceValue } from './outcome.js'
import { failureResult, materialize, thrownResult } from './results.js'
import { fuseSignals, whenAborted } from './signal.js'
import { abandonedRefusal } from '../executor/abandoned.js'

/** The event lists the pipeline reads. */
export interface PipelineListeners {
  readonly preExecute: ListenerList<ToolsEvents['tools/pre-execute']>
  readonly execute: ListenerList<ToolsEvents['tools/execute']>
  readonly postExecute: ListenerList<ToolsEvents['tools/post-execute']>
  readonly result: ListenerList<ToolsEvents['tools/result']>
}

/** How the selected executor routes model-direct calls. */
export interface Route {
  /** The reserved transport and its compiled registration, when the executor serves one. */
  readonly transport?: Registration
  /** Code-only collapse: model-direct calls may name only the transport and the executor's built-ins. */
  readonly codeOnly: boolean
  /** The executor's own tools (`ToolExecutor.builtins`), callable model-direct and from programs. */
  readonly builtins?: ReadonlyMap<string, Registration>
}

/** The executor-owned registration a call names: the transport (model-direct only) or a built-in. */
function ownedBy(route: Route, name: string, direct: boolean): Registration | undefined {
  if (direct && route.transport !== undefined && name === route.transport.name) return route.transport
  return route.builtins?.get(name)
}

/** The executor's notifications of one call; a throw from one is caught. */
interface DispatchHooks {
  readonly onPolicySettled: (() => void) | undefined
  readonly onBodyAborted: ((reason: unknown) => void) | undefined
  /** The caller already had the call approved: an `ask` needs no approval service (model-direct calls only). */
  readonly approved: boolean
  /** A deferred approval becomes an `APPROVAL_DEFERRED` failure rather than a denial. */
  readonly deferrable: boolean
  /** The approval decided later, for a call whose approval was deferred. */
  readonly decision: ApprovalDecision | undefined
  /** `ToolDispatchOptions.maxValueChars`. */
  readonly maxValueChars: number | undefined
}

/**
 * The registration a call runs against, with the content callbacks read once when the call starts (the
 * seed: they are captured at call start), so a definition changed while the body runs does not change how
 * this call's content is projected or finalized.
 */
interface CallRegistration {
  readonly reg: Registration
  readonly projectContent: ToolDefinition['projectContent']
  readonly finalizeContent: ToolDefinition['finalizeContent']
}

/** Per-call mutable state owned by the pipeline (never exposed as such). */
interface CallState {
  contexts: UserMessage[]
  concluded: boolean
  settled: boolean
  bodyInvoked: boolean
  /** The body's own result object: a wrapper returning it unchanged needs no re-check. */
  bodyResult?: ToolExecutionResult
  /** The executor's notification (a throw from it is caught) that the body's signal aborted. */
  readonly onBodyAborted: ((reason: unknown) => void) | undefined
  /** The longest JSON text a value of this call may have (`ToolDispatchOptions.maxValueChars`). */
  readonly maxValueChars: number | undefined
}

/**
 * The shared execution pipeline: snapshot -> token ->
 * collapse -> pre-aborted -> arguments -> pre-execute (+approval) -> guards -> execute
 * wrappers -> body -> output -> render -> post-execute -> finalizeContent ->
 * materialize + freeze -> tools/result. `dispatch` never rejects.
 */
export class Pipeline {
  constructor(
    private readonly layers: Layers,
    private readonly listeners: PipelineListeners,
    private readonly guards: Guards,
    private readonly approval: () => ApprovalService | undefined,
  ) {}

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
      else argumentsError = `arguments are not lossless JSON: ${snap.message}`
    }
    const exec = execution(input, args)
    const direct = exec.parent === undefined
    const owned = ownedBy(route, exec.name, direct)
    if (route.codeOnly && direct && owned === undefined) {
      const hint =
        this.#executable(exec) !== undefined
          ? `; in this mode ${exec.name} is reachable only from a program: call tools[${JSON.stringify(exec.name)}](…) inside ${route.transport?.name ?? 'run_code'}`
          : ''
      return this.#finish(exec, undefined, failureResult('UNKNOWN_TOOL', `unknown tool: ${exec.name}${hint}`))
    }
    const found = owned ?? this.#executable(exec)
    if (found === undefined)
      return this.#finish(exec, undefined, failureResult('UNKNOWN_TOOL', `unknown tool: ${exec.name}`))
    let call: CallRegistration
    try {
      call = startCall(found)
    } catch (error) {
      return this.#finish(exec, undefined, thrownResult(error, 'the tool definition could not be read: '))
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
      result = thrownResult(error, 'the tool pipeline failed: ')
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
      result = thrownResult(error, 'the tool pipeline failed: ')
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
    const admitted = this.#admit(exec, hooks)
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
      result = thrownResult(error, 'a tools/execute wrapper failed: ')
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

  /** pre-execute waterfall, approval, cancellation recheck, guards. Undefined: allowed. A promise only when a listener or approval ran. */
  #admit(
    exec: ToolExecution,
    hooks: DispatchHooks,
  ): ToolExecutionResult | undefined | Promise<ToolExecutionResult | undefined> {
    const listeners = this.listeners.preExecute.for(exec.agent)
    if (listeners.length === 0) return this.#decide(exec, allow(), hooks)
    return runWaterfall(listeners, [exec] as const, allow).then(
      (raw) => {
        let decision: PreToolDecision
        try {
          decision = normalizePreDecision(raw)
        } catch (error) {
          return thrownResult(error, 'a tools/pre-execute listener failed: ')
        }
        return this.#decide(exec, decision, hooks)
      },
      (error: unknown) => thrownResult(error, 'a tools/pre-execute listener failed: '),
    )
  }

  /**
   * Applies a pre-execute decision: deny, cancel, ask (approval; none when the caller had the call
   * `approved`), then the cancellation recheck and guards.
   */
  #decide(
    exec: ToolExecution,
    decision: PreToolDecision,
    hooks: DispatchHooks,
  ): ToolExecutionResult | undefined | Promise<ToolExecutionResult | undefined> {
    if (decision.kind === 'deny') return failureResult('DENIED', decision.reason, decision.info)
    if (decision.kind === 'cancel') return aborted(false)
    if (decision.kind === 'ask' && !hooks.approved) {
      if (hooks.decision === 'rejected') {
        const why = decision.reason === undefined ? '' : ` (${decision.reason})`
        return failureResult('DENIED', `the decision on its deferred approval rejected this call${why}`)
      }
      if (hooks.decision === 'allowed-once') return this.#guard(exec)
      return decideApproval(this.approval(), exec, decision, hooks.deferrable).then((refusal) => {
        if (typeof refusal === 'object') {
          if (exec.signal.aborted) return aborted(false)
          const info = {
            name: 'ToolApprovalDeferredError',
            code: 'APPROVAL_DEFERRED',
            ...(decision.reason !== undefined && { reason: decision.reason }),
            ...(decision.displayReason !== undefined && { displayReason: decision.displayReason }),
          }
          return failureResult('APPROVAL_DEFERRED', refusal.deferred, info)
        }
        if (refusal !== undefined) return exec.signal.aborted ? aborted(false) : failureResult('DENIED', refusal)
        return this.#guard(exec)
      })
    }
    return this.#guard(exec)
  }

  /** The cancellation recheck and the guards. */
  #guard(exec: ToolExecution): ToolExecutionResult | undefined {
    if (exec.signal.aborted) return aborted(false)
    const reason = this.guards.check(exec)
    return reason === undefined ? undefined : failureResult('DENIED', reason)
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
      return failureResult(
        'UNKNOWN_TOOL',
        `unknown tool: ${exec.name} (it was removed, replaced or restricted before the call started)`,
      )
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
      return thrownResult(error, 'a tools/post-execute listener failed: ')
    }
    try {
      return applyPostDecision(reg, exec, result, decision, maxValueChars)
    } catch (error) {
      return thrownResult(error, 'a tools/post-execute decision could not be read: ')
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
        result = materialize(thrownResult(error, 'finalizeContent failed: '))
      }
    }
    emitToObservers(this.listeners.result.for(exec.agent), [exec, result])
    return result
  }

  #executable(exec: ToolExecution): Registration | undefined {
    return executableIn(this.layers, exec.name, exec.agent, exec.toolSet)
  }
}

/** Read the content callbacks of the registration a call starts with, once. */
function startCall(reg: Registration): CallRegistration {
  const { projectContent, finalizeContent } = reg.definition
  return { reg, projectContent, finalizeContent }
}

/** `projectContent`, captured at call start, for an outcome entering post-execute. */
function project(call: CallRegistration, exec: ToolExecution, result: ToolExecutionResult): ToolExecutionResult {
  const projectContent = call.projectContent
  if (projectContent === undefined) return result
  try {
    const content = projectContent.call(call.reg.definition, exec, Object.freeze({ ...result }))
    return content === undefined ? result : { ...result, content }
  } catch (error) {
    return thrownResult(error, 'projectContent failed: ')
  }
}

const allow = (): PreToolDecision => ({ kind: 'allow' })

/** The frozen execution of a call: its identity, its snapshot arguments and a fresh token. */
function execution(input: ToolExecutionInput, args: JsonValue): ToolExecution {
  const fields: { -readonly [K in keyof ToolExecution]: ToolExecution[K] } = {
    callId: input.callId,
    rootCallId: input.rootCallId ?? input.callId,
    name: input.name,
    arguments: args,
    signal: input.signal,
    token: Symbol(input.callId) as ToolExecutionToken,
  }
  if (input.schema !== undefined) fields.schema = input.schema
  if (input.agent !== undefined) fields.agent = input.agent
  if (input.toolSet !== undefined) fields.toolSet = input.toolSet
  if (input.parent !== undefined) fields.parent = input.parent
  return Object.freeze(fields)
}
const accept = (): PostToolDecision => ({ kind: 'accept' })

function aborted(bodyInvoked: boolean): ToolExecutionResult {
  return bodyInvoked
    ? failureResult('ABORTED', 'the tool call was aborted')
    : failureResult('ABORTED_BEFORE_DISPATCH', 'the tool call was aborted before it was dispatched')
}

/**
 * The around-dispatch view of a call: identity is read-only (the view is
 * frozen, so an assignment throws), only `signal` may be replaced, and only by
 * an `AbortSignal`. Built as one literal with an accessor: it is made per call.
 */
function dispatchView(exec: ToolExecution): ToolDispatchExecution {
  let signal = exec.signal
  const view: { -readonly [K in keyof ToolDispatchExecution]: ToolDispatchExecution[K] } = {
    callId: exec.callId,
    rootCallId: exec.rootCallId,
    name: exec.name,
    arguments: exec.arguments,
    token: exec.token,
    get signal(): AbortSignal {
      return signal
    },
    set signal(next: AbortSignal) {
      if (!(next instanceof AbortSignal))
        throw new TypeError('a tools/execute wrapper may replace exec.signal only with an AbortSignal')
      signal = next
    },
  }
  if (exec.schema !== undefined) view.schema = exec.schema
  if (exec.agent !== undefined) view.agent = exec.agent
  if (exec.toolSet !== undefined) view.toolSet = exec.toolSet
  if (exec.parent !== undefined) view.parent = exec.parent
  return Object.freeze(view)
}

/** A notification that cannot throw into the pipeline. */
function catching(notify: ((reason: unknown) => void) | undefined): ((reason: unknown) => void) | undefined {
  if (notify === undefined) return undefined
  let notified = false
  return (reason) => {
    if (notified) return
    notified = true
    try {
      notify(reason)
    } catch {
      // an executor's notification cannot fail the call
    }
  }
}

/** Report the signal's abort (now, if it already aborted) until the returned function is called. */
function watchAbort(signal: AbortSignal, notify: ((reason: unknown) => void) | undefined): () => void {
  if (notify === undefined) return noop
  if (signal.aborted) {
    notify(signal.reason)
    return noop
  }
  return whenAborted(signal, () => notify(signal.reason))
}

const noop = (): void => {}

function withContexts(result: ToolExecutionResult, state: CallState): ToolExecutionResult {
  if (state.contexts.length === 0) return result
  return { ...result, additionalContexts: [...state.contexts, ...(result.additionalContexts ?? [])] }
}
