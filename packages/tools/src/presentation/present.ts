import type { JsonValue } from '../json/types.js'
import type { ToolDefinition } from '../types/definition.js'
import type { ToolResult } from '../types/execution.js'
import type { ToolCallView, ToolResultView } from './types.js'

/**
 * The pending view of a call: the tool's own `presentCall`, or the generic
 * card (title = tool name, raw arguments as input) when it has none, returns
 * `undefined`, or throws. Total.
 */
export function presentCall(name: string, args: JsonValue, definition?: ToolDefinition): ToolCallView {
  const own = attempt(() => definition?.presentCall?.(args))
  return own ?? { card: 'generic', title: name, rawInput: args }
}

/**
 * The completed view of a call: the tool's own `presentResult`, or the
 * generic card showing the raw result content. Total.
 */
export function presentResult(args: JsonValue, result: ToolResult, definition?: ToolDefinition): ToolResultView {
  const own = attempt(() => definition?.presentResult?.(args, result))
  return own ?? { card: 'generic', content: [...result.content] }
}

function attempt<T>(present: () => T | undefined): T | undefined {
  try {
    return present()
  } catch {
    return undefined
  }
}
