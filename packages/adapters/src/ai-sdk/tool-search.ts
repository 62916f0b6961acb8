import type { Tool } from 'ai'
import { WireNameCollisionError } from '../errors.js'
import { deferralOf, shown, type DeferralOptions } from '../shapes/deferral.js'

/** The key `toAiSdkTools` adds the search tool under. */
export const TOOL_SEARCH_KEY = 'tool_search'

/** What a deferred tool gets: the provider's mark (`providerOptions.<provider>.deferLoading`) or ai 7's own. */
export type DeferralMark = { providerOptions: { [provider: string]: { deferLoading: true } } } | { deferLoading: true }

/** The deferral of one `toAiSdkTools` call: how each tool is marked, and the search tool to add. */
export interface AiSdkDeferral {
  mark(name: string): DeferralMark | undefined
  readonly searchTool: Tool | undefined
}

/**
 * The deferral options checked against the tools' names. The search tool says how deferred tools are marked:
 * a provider's (`{ type: 'provider', id: 'anthropic.tool_search_bm25_20251119' }`, `provider-defined` in ai 5)
 * reads `providerOptions.<provider>.deferLoading`; ai 7's `toolSearch()` reads the tool's own `deferLoading`.
 * @throws TypeError naming the option to change
 * @throws WireNameCollisionError when a tool is named `tool_search`, the search tool's key
 */
export function aiSdkDeferral(
  options: DeferralOptions & { readonly toolSearch?: Tool },
  names: readonly string[],
): AiSdkDeferral {
  const deferred = deferralOf(options)
  const searchTool = options.toolSearch
  const mark = searchTool === undefined ? undefined : markOf(searchTool)
  const count = deferred === undefined ? 0 : names.filter(deferred).length
  if (count > 0 && searchTool === undefined) {
    const fix = `pass toolSearch (${SEARCH_TOOLS})`
    throw new TypeError(`deferLoading defers ${count} tool(s), but no search tool finds them: ${fix}`)
  }
  if (searchTool !== undefined && names.includes(TOOL_SEARCH_KEY)) {
    const added = 'the search tool of toAiSdkTools (toolSearch)'
    throw new WireNameCollisionError(TOOL_SEARCH_KEY, TOOL_SEARCH_KEY, TOOL_SEARCH_KEY, added)
  }
  return {
    mark: (name) => (deferred?.(name) === true && mark !== undefined ? structuredClone(mark) : undefined),
    searchTool,
  }
}

const SEARCH_TOOLS =
  "the provider's, anthropic.tools.toolSearchBm25_20251119() or openai.tools.toolSearch(), or ai 7's toolSearch()"

/** ai 7 marks its `toolSearch()` tool with this (`Symbol.for`: the same in every copy of `ai`). */
const AI_TOOL_SEARCH = Symbol.for('vercel.ai.toolSearch')

/** @throws TypeError when `tool` is not a tool search the adapter knows how to defer tools for */
function markOf(tool: Tool): DeferralMark {
  const t = tool as unknown as { type?: unknown; id?: unknown; [AI_TOOL_SEARCH]?: unknown } | null
  if (typeof t !== 'object' || t === null) {
    throw new TypeError(`toolSearch must be a tool search (${SEARCH_TOOLS}), not ${shown(tool)}`)
  }
  if (t[AI_TOOL_SEARCH] === true) return { deferLoading: true }
  const providerTool = typeof t.id === 'string' && (t.type === 'provider' || t.type === 'provider-defined')
  // The provider's name prefixes its tool ids (`anthropic.tool_search_…`, `openai.tool_search`).
  const provider = providerTool ? /^(\w+)\.\w*tool_search/.exec(t.id as string)?.[1] : undefined
  if (provider === undefined) {
    const kind = `a tool of type ${shown(t.type)} and id ${shown(t.id)}`
    throw new TypeError(`toolSearch must be a tool search (${SEARCH_TOOLS}), not ${kind}`)
  }
  return { providerOptions: { [provider]: { deferLoading: true } } }
}
