import { NoExecutorError, ToolRegistrationError, ToolRestrictionError } from '../errors.js'
import { emitToObservers } from '../events/emit.js'
import { ListenerList } from '../events/listeners.js'
import { runWaterfall } from '../events/waterfall.js'
import { createNativeExecutor } from '../executor/native.js'
import { Guards } from '../pipeline/guards.js'
import { Pipeline } from '../pipeline/pipeline.js'
import { batchSignal } from '../pipeline/signal.js'
import { contentProblem } from '../pipeline/results.js'
import type { ContentBlock, ToolSchema } from '../types/content.js'
import type { PreToolDecision, ToolGuard } from '../types/decisions.js'
import type {
  ResolvedToolSet,
  ToolActivationContext,
  ToolDefinition,
  ToolRegistrationOptions,
  ToolRestriction,
} from '../types/tool.js'
import type { PtcDispatchLog, ToolsEventName, ToolsEvents } from '../types/events.js'
import type { ToolExecution, ToolExecutionMode } from '../types/tool.js'
import type {
  ToolBatchInput,
  ToolBatchResult,
  ToolExecutor,
  ToolExecutorServices,
  ToolModelInput,
  ToolPromptSection,
  ToolResumeInput,
} from '../types/executor.js'
import type { ApprovalService } from '../types/approval.js'
import type { Agent, Scope, ScopeKey } from '../types/scope.js'
import { ExecutorSelection } from './executors.js'
import { Layers } from './layers.js'
import { createRegistration, RUN_CODE, type Registration } from './registration.js'
import { compileRestriction } from './restriction.js'
import { executableIn, isAdmitted, resolveToolSet } from './tool-set.js'
import { isConcurrencySafeCall } from '../executor/classify.js'

export interface ToolsServiceOptions {
  /** Answers `ask` decisions; without it, `ask` is a denial. */
  approval?: ApprovalService
  /** Cap of the built-in native executor's rolling pool (default 10). */
  maxParallelToolCalls?: number
}

/** The model-facing input of a step in the selected executor's mode. */
export interface ToolStepInput extends ToolModelInput {
  readonly sections: readonly ToolPromptSection[]
}

type Listeners = { [E in ToolsEventName]: ListenerList<ToolsEvents[E]> }

/** Shared state behind every view of one service. */
class Core {
  readonly layers = new Layers()
  readonly guards = new Guards()
  readonly listeners: Listeners = {
    'tools/change': new ListenerList(),
    'tools/pre-execute': new ListenerList(),
    'tools/execute': new ListenerList(),
    'tools/post-execute': new ListenerList(),
    'tools/ptc-dispatch-log': new ListenerList(),
    'tools/result': new ListenerList(),
  }
  readonly executors: ExecutorSelection
  readonly pipeline: Pipeline
  readonly views = new WeakMap<Scope, ToolsView>()
  readonly servicesOf = new WeakMap<ToolExecutor, ToolExecutorServices>()
  readonly transports = new WeakMap<ToolExecutor, ToolDefinition>()

  constructor(readonly options: ToolsServiceOptions) {
    this.executors = new ExecutorSelection(
      createNativeExecutor(
        options.maxParallelToolCalls === undefined ? {} : { maxParallelToolCalls: options.maxParallelToolCalls },
      ),
    )
    const l = this.listeners
    this.pipeline = new Pipeline(
      this.layers,
      {
        preExecute: l['tools/pre-execute'],
        execute: l['tools/execute'],
        postExecute: l['tools/post-execute'],
        result: l['tools/result'],
      },
      this.guards,
      () => this.options.approval,
    )
  }

  /** The name reserved by an installed executor's built-in tools, if `name` is one. */
  reservedBy(name: string): boolean {
    return this.executors.reserved().has(name)
  }

  changed(): void {
    emitToObservers(this.listeners['tools/change'].all(), [])
  }

  executable(name: string, scope: Scope | undefined, toolSet: ResolvedToolSet | undefined): Registration | undefined {
    return executableIn(this.layers, name, scope, toolSet)
  }

  visible(scope: Scope | undefined, toolSet: ResolvedToolSet | undefined): Registration[] {
    const regs = this.layers.visible(scope)
    return toolSet === undefined ? regs : regs.filter((reg) => isAdmitted(reg, scope, toolSet))
  }

  /** The transport definition of the executor selected for `scope`, if it serves one. */
  transport(scope: Scope | undefined): ToolDefinition | undefined {
    const executor = this.executors.select(scope)
    if (executor === null || executor.transport === undefined) return undefined
    this.services(executor)
    return this.transports.get(executor)
  }

  /** The definition of the built-in tool `name` of the executor selected for `scope`, if it has one. */
  builtin(name: string, scope: Scope | undefined): ToolDefinition | undefined {
    const executor = this.executors.select(scope)
    if (executor === null || !builtinNames(executor).includes(name)) return undefined
    return this.services(executor)
      .builtins()
      .find((d) => d.name === name)
  }

  /** The services handed to `executor`, built once, with the executor's transport route. */
  services(executor: ToolExecutor): ToolExecutorServices {
    let services = this.servicesOf.get(executor)
    if (services !== undefined) return services
    const builtins = new Map<string, Registration>()
    const route: { transport?: Registration; codeOnly: boolean; builtins: ReadonlyMap<string, Registration> } = {
      codeOnly: executor.codeOnly === true,
      builtins,
    }
    services = Object.freeze({
      dispatch: (input, options) => this.pipeline.dispatch(input, route, options),
      mode: (input): ToolExecutionMode => {
        const reg =
          input.name === route.transport?.name
            ? route.transport
            : (builtins.get(input.name) ?? this.executable(input.name, input.agent, input.toolSet))
        return reg !== undefined && isConcurrencySafeCall(reg.definition, input.arguments) ? PARALLEL : EXCLUSIVE
      },
      definitions: (scope, toolSet) => this.visible(scope, toolSet).map((reg) => reg.registered),
      builtins: () => [...builtins.values()].map((reg) => reg.registered),
      executable: (name, scope, toolSet) => (builtins.get(name) ?? this.executable(name, scope, toolSet))?.registered,
      ptcDispatchLog: (dispatch) => this.ptcDispatchLog(dispatch),
      complete: (input, result) => this.pipeline.complete(input, route, result),
    } satisfies ToolExecutorServices)
    if (executor.transport !== undefined) {
      route.transport = createRegistration(executor.transport(services), {}, undefined, true)
      this.transports.set(executor, route.transport.definition)
    }
    if (executor.builtins !== undefined) {
      const names = new Set(executor.builtins.names)
      for (const definition of executor.builtins.define(services)) {
        if (!names.has(definition.name) || builtins.has(definition.name)) {
          throw new TypeError(
            `the executor's built-in tool ${JSON.stringify(definition.name)} is not one of its reserved names, or twice`,
          )
        }
        builtins.set(definition.name, createRegistration(definition, {}, undefined, true))
      }
    }
    this.servicesOf.set(executor, services)
    return services
  }

  async ptcDispatchLog(dispatch: PtcDispatchLog): Promise<ContentBlock[]> {
    const original = dispatch.content
    try {
      const content = await runWaterfall(
        this.listeners['tools/ptc-dispatch-log'].for(dispatch.agent),
        [Object.freeze({ ...dispatch })] as const,
        () => original,
      )
      return contentProblem(content) === undefined ? content : original
    } catch {
      return original
    }
  }
}

const PARALLEL: ToolExecutionMode = Object.freeze({ kind: 'parallel' })
const EXCLUSIVE: ToolExecutionMode = Object.freeze({ kind: 'exclusive' })

/**
 * The registry as one scope sees it. `ToolsService` is the global view;
 * `scoped(scope)` returns the view bound to a scope, with the same methods.
 */
export class ToolsView {
  readonly #core: Core
  /** The scope this view is bound to; undefined for the global view. */
  readonly scope: Scope | undefined

  protected constructor(core: Core, scope: Scope | undefined) {
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
  protected static createCore(options: ToolsServiceOptions): Core {
    return new Core(options)
  }
}

/** The tool registry and scoped executor dispatcher. */
export class ToolsService extends ToolsView {
  constructor(options: ToolsServiceOptions = {}) {
    super(ToolsView.createCore(options), undefined)
  }
}

function builtinNames(executor: ToolExecutor): readonly string[] {
  const builtins = (executor as Partial<ToolExecutor> | null)?.builtins
  return builtins === undefined ? [] : builtins.names
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
