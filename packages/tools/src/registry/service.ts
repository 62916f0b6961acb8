import { NoExecutorError, ToolRegistrationError, ToolRestrictionError } from '../errors.js'
import type { ListenerList } from '../events/listeners.js'
import { batchSignal } from '../pipeline/signal.js'
import type { ToolSchema } from '../types/content.js'
import type { PreToolDecision, ToolGuard } from '../types/decisions.js'
import type {
  ResolvedToolSet,
  ToolActivationContext,
  ToolDefinition,
  ToolRegistrationOptions,
  ToolRestriction,
} from '../types/tool.js'
import type { ToolsEventName, ToolsEvents } from '../types/events.js'
import type { ToolExecution } from '../types/tool.js'
import type {
  ToolBatchInput,
  ToolBatchResult,
  ToolExecutor,
  ToolModelInput,
  ToolPromptSection,
  ToolResumeInput,
} from '../types/executor.js'
import type { Agent, Scope, ScopeKey } from '../types/scope.js'
import { createRegistration, RUN_CODE, type Registration } from './registration.js'
import { compileRestriction } from './restriction.js'
import { builtinNames, Core, type ToolsServiceOptions } from './service-core.js'
import { isAdmitted, resolveToolSet } from './tool-set.js'

export type { ToolsServiceOptions } from './service-core.js'

/** The model-facing input of a step in the selected executor's mode. */
export interface ToolStepInput extends ToolModelInput {
  readonly sections: readonly ToolPromptSection[]
}

/**
 * The registry as one scope sees it. `ToolsService` is the global view;
 * `scoped(scope)` returns the view bound to a scope, with the same methods.
 */
export class ToolsView {
  readonly #core: Core<ToolsView>
  /** The scope this view is bound to; undefined for the global view. */
  readonly scope: Scope | undefined

  protected constructor(core: Core<ToolsView>, scope: Scope | undefined) {
    this.#core = core
    this.scope = scope
  }

  /** The view bound to `scope` (the same object for the same scope). */
  scoped(scope: Scope): ToolsView {
    if (typeof scope !== 'object' || scope === null) throw new TypeError('scoped() needs a scope object')
    let view = this.#core.views.get(scope)
    if (view === undefined) this.#core.views.set(scope, (view = new ToolsView(this.#core, scope)))
    return view
  }

  /** Register globally (global view) or in this view's scope. Returns the exact disposer. */
  register(definition: ToolDefinition, options: ToolRegistrationOptions = {}): () => void {
    const reg = createRegistration(definition, options, this.scope)
    if (this.#core.reservedBy(reg.name)) throw new ToolRegistrationError(reservedMessage(reg.name))
    const remove = this.#core.layers.add(reg)
    this.#core.changed()
    let done = false
    return () => {
      if (done) return
      done = true
      remove()
      this.#core.changed()
    }
  }

  /** Restrict inherited tools for this view's scope. Restrictions intersect. Returns the exact disposer. */
  restrict(filter: ToolRestriction): () => void {
    const scope = this.scope
    if (scope === undefined)
      throw new ToolRestrictionError(
        'restrict() is available on scoped views only: use tools.scoped(agent).restrict(…)',
      )
    const layers = this.#core.layers
    const compiled = compileRestriction(
      filter,
      (name) => layers.isLocal(scope, name),
      (name) => layers.isInherited(scope, name),
    )
    const lift = layers.restrict(scope, compiled)
    this.#core.changed()
    let done = false
    return () => {
      if (done) return
      done = true
      lift()
      this.#core.changed()
    }
  }

  /**
   * The definition `scope` sees for `name`; with a step set, only if admitted.
   * `run_code` resolves to the transport of the executor selected for the
   * scope (never registered), so presenters can render its calls.
   */
  get(name: string, scope: ScopeKey | undefined = this.scope, toolSet?: ResolvedToolSet): ToolDefinition | undefined {
    if (name === RUN_CODE) return this.#core.transport(scope)
    const builtin = this.#core.builtin(name, scope)
    if (builtin !== undefined) return builtin
    const reg = this.#core.layers.lookup(name, scope)
    if (reg === undefined) return undefined
    return toolSet === undefined || isAdmitted(reg, scope, toolSet) ? reg.definition : undefined
  }

  /** The definition a call may execute; without a step set, conditional registrations are unavailable. */
  executable(
    name: string,
    scope: ScopeKey | undefined = this.scope,
    toolSet?: ResolvedToolSet,
  ): ToolDefinition | undefined {
    return this.#core.executable(name, scope, toolSet)?.definition
  }

  /** Resolve every condition once for a step. A rejection publishes no partial set. */
  resolve(context: ToolActivationContext): Promise<ResolvedToolSet> {
    return resolveToolSet(this.#core.layers, context)
  }

  /** Visible definitions after shadowing and restrictions, limited to the step's admission when given. */
  definitions(scope: ScopeKey | undefined = this.scope, toolSet?: ResolvedToolSet): readonly ToolDefinition[] {
    return this.#core.visible(scope, toolSet).map((reg) => reg.definition)
  }

  /** Allow-listed model-facing projections `{name, description, parameters}`, detached deep copies. */
  schemas(scope: ScopeKey | undefined = this.scope, toolSet?: ResolvedToolSet): ToolSchema[] {
    return this.#core.visible(scope, toolSet).map((reg) => projectSchema(reg))
  }

  /**
   * What a model request of this step declares, in the selected executor's mode, with its prompt sections:
   * the executor's `sections`, then the step's from `describe()` (a step section replaces an executor
   * section of the same name, e.g. the PTC SDK section: guidance, then the guidance with the declarations).
   */
  modelInput(scope: ScopeKey | undefined = this.scope, toolSet?: ResolvedToolSet): ToolStepInput {
    const executor = this.#core.executors.select(scope)
    if (executor === null) throw new NoExecutorError()
    const described = executor.describe(this.#core.visible(scope, toolSet).map((reg) => reg.registered))
    return {
      schemas: described.schemas,
      knownNames: described.knownNames,
      sections: stepSections(executor.sections ?? [], described.sections ?? []),
    }
  }

  /** Provide the executor for this view's scope (global view: the deployment default). Returns the disposer. */
  setExecutor(executor: ToolExecutor): () => void {
    for (const name of builtinNames(executor)) {
      if (this.#core.layers.hasAnywhere(name)) throw new ToolRegistrationError(reservedMessage(name))
    }
    return this.#core.executors.set(executor, this.scope)
  }

  /** Delegate a raw batch to the executor selected for its agent. Rejects only when none is available. */
  async execute(input: ToolBatchInput): Promise<ToolBatchResult> {
    checkBatchInput(input)
    // A scoped view runs calls on behalf of its scope when the batch names no agent.
    const agent = input.agent ?? this.scope
    const executor = this.#core.executors.select(agent)
    if (executor === null) throw new NoExecutorError()
    return onBatchSignal(input, agent, (batch) => executor.execute(batch, this.#core.services(executor)))
  }

  /**
   * Continues a `run_code` program that suspended awaiting a deferred approval (its result's
   * `awaiting.token`), with the decision: the calls it waits on are dispatched again with that approval
   * (a rejection throws `ToolCallError` with code `DENIED` in the program), and the program goes on where
   * it waited — in this process or another that shares the executor's store and the runtime's secret.
   * Resolves with the original call's result (`awaiting` again if it waits on another approval), which
   * the call's projectContent, `tools/post-execute` listeners, finalizeContent and `tools/result` see as
   * they saw its first one (with the call's id and arguments). Rejects
   * when the executor selected for the agent cannot resume, or the token is unknown, expired, taken or
   * its state is refused (the state stays stored then).
   */
  async resume(input: ToolResumeInput): Promise<ToolBatchResult> {
    if (typeof input !== 'object' || input === null || typeof input.token !== 'string')
      throw new TypeError('resume() needs { token, decision, signal }')
    if (!(input.signal instanceof AbortSignal)) throw new TypeError('resume() needs a caller-owned AbortSignal')
    const agent = input.agent ?? this.scope
    const executor = this.#core.executors.select(agent)
    if (executor === null) throw new NoExecutorError()
    if (executor.resume === undefined)
      throw new TypeError(
        'the executor selected for this agent cannot resume programs (createPtcExecutor({ durable }) can)',
      )
    const resume = executor.resume.bind(executor)
    return onBatchSignal(input, agent, (batch) => resume(batch, this.#core.services(executor)))
  }

  /**
   * What this scope's `tools/pre-execute` policies decide for a call, without running it (`allow`, `deny`,
   * `cancel` or `ask`, with its reason): for a harness whose model API has its own approval step, such as
   * the AI SDK's `needsApproval`. After that approval, pass the call's id in `execute({ approved })`. The
   * policies run again when the call is executed; a throwing listener gives `allow` here.
   */
  preflight(call: {
    readonly callId: string
    readonly name: string
    readonly arguments: unknown
    readonly agent?: Agent
    readonly toolSet?: ResolvedToolSet
    readonly signal?: AbortSignal
  }): Promise<PreToolDecision> {
    const agent = call.agent ?? this.scope
    return this.#core.pipeline.preflight({
      callId: call.callId,
      name: call.name,
      arguments: call.arguments,
      signal: call.signal ?? new AbortController().signal,
      ...(agent !== undefined && { agent }),
      ...(call.toolSet !== undefined && { toolSet: call.toolSet }),
    })
  }

  /** Register a monotonic guard in this view's scope. Returns the disposer. */
  guard(guard: ToolGuard): () => void {
    return this.#core.guards.add(guard, this.scope)
  }

  /** Global, then inherited guards: the first denial reason, or undefined. */
  checkGuards(exec: ToolExecution): string | undefined {
    return this.#core.guards.check(exec)
  }

  /** Add a listener; through a scoped view it sees only that scope's calls (`tools/change` is unfiltered). */
  on<E extends ToolsEventName>(event: E, listener: ToolsEvents[E]): () => void {
    const list = this.#core.listeners[event] as ListenerList<ToolsEvents[E]> | undefined
    if (list === undefined) throw new TypeError(`unknown tools event: ${String(event)}`)
    if (typeof listener !== 'function') throw new TypeError('a listener must be a function')
    return list.add(listener, event === 'tools/change' ? undefined : this.scope)
  }

  /** Make the core reachable for subclasses' constructors only. */
  protected static createCore(options: ToolsServiceOptions): Core<ToolsView> {
    return new Core<ToolsView>(options)
  }
}

/** The tool registry and scoped executor dispatcher. */
export class ToolsService extends ToolsView {
  constructor(options: ToolsServiceOptions = {}) {
    super(ToolsView.createCore(options), undefined)
  }
}

function reservedMessage(name: string): string {
  return (
    `${JSON.stringify(name)} is reserved for the executor's built-in tool while it is installed ` +
    "(the PTC executor's tool search): rename your tool, or create the executor with discovery: false"
  )
}

function projectSchema(reg: Registration): ToolSchema {
  return { name: reg.name, description: reg.definition.description, parameters: structuredClone(reg.parameters) }
}

/** The executor's own sections, then the step's; a step section supersedes an executor section of the same name. */
function stepSections(owned: readonly ToolPromptSection[], step: readonly ToolPromptSection[]): ToolPromptSection[] {
  const superseded = new Set(step.map((s) => s.name))
  return [...owned.filter((s) => !superseded.has(s.name)), ...step]
}

function checkBatchInput(input: ToolBatchInput): void {
  if (typeof input !== 'object' || input === null || !Array.isArray(input.calls))
    throw new TypeError('execute() needs { calls: ToolCallBlock[], signal }')
  if (!(input.signal instanceof AbortSignal)) throw new TypeError('execute() needs a caller-owned AbortSignal')
  const cap = input.maxParallelToolCalls
  if (cap !== undefined && (!Number.isInteger(cap) || cap < 1))
    throw new TypeError('maxParallelToolCalls must be a positive integer')
  if (input.log !== undefined && input.agent === undefined) throw new TypeError('log requires an agent')
  if (
    input.approved !== undefined &&
    (!Array.isArray(input.approved) || !input.approved.every((id) => typeof id === 'string'))
  ) {
    throw new TypeError('approved must be an array of call ids (strings)')
  }
}

/**
 * Runs `run` on `input` with `agent` and a signal of the batch's own, which follows the caller's (see
 * `batchSignal`): the calls listen on that one, and the caller's carries one listener of ours until the end.
 */
async function onBatchSignal<T extends { readonly signal: AbortSignal; readonly agent?: Agent }>(
  input: T,
  agent: Agent | undefined,
  run: (batch: T) => Promise<ToolBatchResult>,
): Promise<ToolBatchResult> {
  const signal = batchSignal(input.signal)
  try {
    return await run({ ...input, signal: signal.signal, ...(agent !== undefined && { agent }) })
  } finally {
    signal.release()
  }
}
