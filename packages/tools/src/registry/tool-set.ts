import { describeThrown, ToolsError } from '../errors.js'
import type { ResolvedToolSet, ToolActivationContext, ToolDefinition } from '../types/tool.js'
import type { Scope, ScopeKey } from '../types/scope.js'
import type { Layers } from './layers.js'
import type { Registration } from './registration.js'

/** Step preparation failed: a condition rejected, returned a non-boolean, or preparation was cancelled. */
export class ToolSetResolutionError extends ToolsError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('TOOL_ERROR', message, options)
  }
}

/** Our own sets: admission is checked by identity, without building a view. */
const internals = new WeakMap<ResolvedToolSet, AdmittedSet>()

interface AdmittedSet {
  readonly agent: Scope
  readonly admitted: ReadonlySet<Registration>
  disposed: boolean
}

/**
 * Resolve every visible registration's condition once for this step. A
 * rejection or cancellation publishes nothing. Registrations removed while
 * conditions ran are not admitted.
 */
export async function resolveToolSet(layers: Layers, context: ToolActivationContext): Promise<ResolvedToolSet> {
  const { agent, signal } = context
  if (typeof agent !== 'object' || agent === null)
    throw new ToolSetResolutionError('resolve() needs the agent preparing the step')
  if (signal.aborted) throw new ToolSetResolutionError('step preparation was cancelled', { cause: signal.reason })
  const visible = layers.visible(agent)
  const frozenContext: ToolActivationContext = Object.freeze({
    agent,
    signal,
    modelSelection: Object.freeze({ ...context.modelSelection }),
  })
  const decisions = await Promise.all(
    visible.map(async (reg) => {
      if (reg.when === undefined) return true
      let enabled: unknown
      try {
        enabled = await reg.when(frozenContext)
      } catch (error) {
        throw new ToolSetResolutionError(
          `the condition of tool ${JSON.stringify(reg.name)} rejected: ${describeThrown(error)}`,
          { cause: error },
        )
      }
      if (typeof enabled !== 'boolean') {
        throw new ToolSetResolutionError(
          `the condition of tool ${JSON.stringify(reg.name)} returned ${typeof enabled}, not a boolean`,
        )
      }
      return enabled
    }),
  )
  if (signal.aborted) throw new ToolSetResolutionError('step preparation was cancelled', { cause: signal.reason })
  const admitted = new Set<Registration>()
  visible.forEach((reg, i) => {
    if (decisions[i] === true && reg.alive) admitted.add(reg)
  })
  const state: AdmittedSet = { agent, admitted, disposed: false }
  const set: ResolvedToolSet = Object.freeze({
    dispose(): void {
      state.disposed = true
    },
    view(scope: ScopeKey | undefined): ReadonlyMap<string, ToolDefinition> {
      const out = new Map<string, ToolDefinition>()
      if (state.disposed || scope !== state.agent) return out
      for (const reg of state.admitted) if (layers.lookup(reg.name, scope) === reg) out.set(reg.name, reg.definition)
      return out
    },
  })
  internals.set(set, state)
  return set
}

/**
 * The registration a call by `scope` executes for `name`: the one `scope` sees, if `toolSet` admits it.
 * The one lookup of the registry's `executable`, the pipeline and (through the executor host) the PTC
 * scheduler and bindings.
 */
export function executableIn(
  layers: Layers,
  name: string,
  scope: Scope | undefined,
  toolSet: ResolvedToolSet | undefined,
): Registration | undefined {
  const reg = layers.lookup(name, scope)
  return reg !== undefined && isAdmitted(reg, scope, toolSet) ? reg : undefined
}

/**
 * Whether `reg` (the registration `scope` currently sees) may start a call
 * under `toolSet`. Without a set, conditional registrations are unavailable.
 */
export function isAdmitted(reg: Registration, scope: Scope | undefined, toolSet: ResolvedToolSet | undefined): boolean {
  if (toolSet === undefined) return reg.when === undefined
  const state = internals.get(toolSet)
  if (state !== undefined) return !state.disposed && state.agent === scope && state.admitted.has(reg)
  try {
    return toolSet.view(scope).get(reg.name) === reg.definition
  } catch {
    return false
  }
}
