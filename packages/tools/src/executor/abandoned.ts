import { failureResult } from '../pipeline/results.js'
import type { ToolDefinition, ToolExecutionResult } from '../types/tool.js'

/**
 * The most bodies of one tool (one definition, in this process) that executors abandoned and that have not
 * ended: past it, a call of that tool fails at once (`TOOL_ERROR`) until some end, whether a model or a
 * program made it. A body that ignores its abort signal cannot be stopped; each one left behind holds its
 * arguments and closures (about 3 KB measured), and a program that made 10 000 such calls a run grew the
 * host by 30 MB a run, without end.
 */
export const MAX_ABANDONED_BODIES = 256

/** By the definition executors see (`ToolExecutorServices.executable`). */
const running = new WeakMap<ToolDefinition, number>()

/** A body of `definition` was abandoned (+1), or an abandoned one has ended (-1). */
export function countAbandoned(definition: ToolDefinition, change: 1 | -1): void {
  running.set(definition, (running.get(definition) ?? 0) + change)
}

/**
 * The `TOOL_ERROR` result of a call of `name` that must not start: `MAX_ABANDONED_BODIES` abandoned bodies
 * of its definition are still running. Undefined when it may start (or there is no definition to count).
 */
export function abandonedRefusal(
  definition: ToolDefinition | undefined,
  name: string,
): ToolExecutionResult | undefined {
  const stuck = definition === undefined ? 0 : (running.get(definition) ?? 0)
  if (stuck < MAX_ABANDONED_BODIES) return undefined
  const what =
    `${stuck} earlier calls of ${name} were abandoned and are still running (its body does not stop when ` + `told to)`
  return failureResult('TOOL_ERROR', `${what}; no call of it starts until some of them end`)
}
