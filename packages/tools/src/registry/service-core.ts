import { emitToObservers } from '../events/emit.js'
import { ListenerList } from '../events/listeners.js'
import { runWaterfall } from '../events/waterfall.js'
import { isConcurrencySafeCall } from '../executor/classify.js'
import { createNativeExecutor } from '../executor/native.js'
import { Guards } from '../pipeline/guards.js'
import { Pipeline } from '../pipeline/pipeline.js'
import { contentProblem } from '../pipeline/results.js'
import type { ApprovalService } from '../types/approval.js'
import type { ContentBlock } from '../types/content.js'
import type { PtcDispatchLog, ToolsEventName, ToolsEvents } from '../types/events.js'
import type { ToolExecutor, ToolExecutorServices } from '../types/executor.js'
import type { Scope } from '../types/scope.js'
import type { ResolvedToolSet, ToolDefinition, ToolExecutionMode } from '../types/tool.js'
import { ExecutorSelection } from './executors.js'
import { Layers } from './layers.js'
import { createRegistration, type Registration } from './registration.js'
import { executableIn, isAdmitted } from './tool-set.js'

type Listeners = { [E in ToolsEventName]: ListenerList<ToolsEvents[E]> }

export interface ToolsServiceOptions {
  /** Answers `ask` decisions; without it, `ask` is a denial. */
  approval?: ApprovalService
  /** Cap of the built-in native executor's rolling pool (default 10). */
  maxParallelToolCalls?: number
}

/** Shared state behind every view (`View`) of one service. */
export class Core<View extends object = object> {
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
  readonly views = new WeakMap<Scope, View>()
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
            `the executor's built-in tool ${JSON.stringify(definition.name)} ` +
              'is not one of its reserved names, or twice',
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

export function builtinNames(executor: ToolExecutor): readonly string[] {
  const builtins = (executor as Partial<ToolExecutor> | null)?.builtins
  return builtins === undefined ? [] : builtins.names
}
