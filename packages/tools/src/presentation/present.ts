import type { JsonValue } from '../json/types.js'
import type { ToolDefinition } from '../types/tool.js'
import type { ToolResult } from '../types/tool.js'
import type { ToolCallView, ToolResultView } from './types.js'

/**
 * The pending view of a call: the tool's own `presentCall`, or the generic
 * card (title = tool name, raw arguments as input) when it has none, returns
 * `undefined`, or throws. Total.
 */
export function presentCall(name: string, args: JsonValue, definition?: ToolDefinition): ToolCallView {
  const own = attempt(() => definition?.presentCall?.(args), CALL_CARDS)
  return own ?? { card: 'generic', title: name, rawInput: args }
}

/**
 * The completed view of a call: the tool's own `presentResult`, or the
 * generic card showing the raw result content. Total.
 */
export function presentResult(args: JsonValue, result: ToolResult, definition?: ToolDefinition): ToolResultView {
  const own = attempt(() => definition?.presentResult?.(args, result), RESULT_CARDS)
  return own ?? { card: 'generic', content: [...result.content] }
}

const CALL_CARDS: ReadonlySet<unknown> = new Set(['generic', 'terminal', 'diff'])
const RESULT_CARDS: ReadonlySet<unknown> = new Set(['generic', 'terminal', 'diff', 'search', 'read', 'web'])

/** The presenter's view, or undefined when it has none, throws, or returns something that is not a known card. */
function attempt<T>(present: () => T | undefined, cards: ReadonlySet<unknown>): T | undefined {
  try {
    const view: unknown = present()
    return typeof view === 'object' && view !== null && cards.has((view as { card?: unknown }).card)
      ? (view as T)
      : undefined
  } catch {
    return undefined
  }
}
