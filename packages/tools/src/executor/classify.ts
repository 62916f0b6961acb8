import type { ToolDefinition } from '../types/tool.js'

/**
 * Whether a call of `definition` with `args` may overlap other such calls: only an exact `true`
 * from its `isConcurrencySafe` classifier is parallel; no classifier, any other answer or a throw
 * is exclusive (it fails closed). The native executor, the PTC scheduler and `defineTool`'s typed
 * classifier all decide with this one rule.
 */
export function isConcurrencySafeCall(definition: Pick<ToolDefinition, 'isConcurrencySafe'>, args: unknown): boolean {
  const classify = definition.isConcurrencySafe
  if (classify === undefined) return false
  try {
    return classify.call(definition, args) === true
  } catch {
    return false
  }
}
