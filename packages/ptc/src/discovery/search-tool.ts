/**
 * The built-in `search_tools` tool: a search over the tools the calling agent may call, through the pipeline like
 * any tool (policies, guards, approval and the dispatch log apply to each search).
 */
import { renderToolDeclaration, searchToolsBinding } from '@ptc/bindings'
import {
  ToolArgsError,
  type JsonSchemaNode,
  type JsonValue,
  type ObjectJsonSchema,
  type ToolDefinition,
  type ToolExecutorServices,
  type ToolRunContext,
} from '@ptc/tools'
import { bindingTool, callableTools } from '../bindings.js'
import { SEARCH_TOOLS } from './options.js'
import { ToolSearchIndex } from './search/index.js'
import { searchResultText } from './text.js'

export const DEFAULT_SEARCH_LIMIT = 5
export const MAX_SEARCH_LIMIT = 50
/** The longest query accepted, in characters. */
export const MAX_QUERY_CHARS = 1_000

/** The schemas and description of `search_tools`, as programs and the checker declare it. */
export const SEARCH_TOOLS_PARAMETERS: ObjectJsonSchema = searchToolsBinding.parameters
export const SEARCH_TOOLS_OUTPUT: JsonSchemaNode = searchToolsBinding.output
export const SEARCH_TOOLS_DESCRIPTION: string = searchToolsBinding.description

/** One match, as the tool returns it. */
export interface FoundTool {
  readonly name: string
  readonly description: string
  readonly declaration: string
}

/** Searches older than this many searches ago no longer keep a tool that left every catalog in the index. */
const SWEEP_AFTER = 64

/**
 * The tools of every catalog searched so far, indexed once and kept current: a search adds the tools registered
 * since the last one and replaces those re-registered (an MCP upstream's `list_changed` does), and a tool no
 * search has seen for `SWEEP_AFTER` searches is dropped. A search only returns tools the caller may call.
 */
export class ToolCatalog {
  readonly #index = new ToolSearchIndex()
  readonly #indexed = new Map<string, { view: ToolDefinition; seen: number }>()
  #searches = 0

  /** Brings the index up to date with `definitions` (views of registrations, as the services give them). */
  sync(definitions: readonly ToolDefinition[]): void {
    const now = ++this.#searches
    for (const view of definitions) {
      const entry = this.#indexed.get(view.name)
      if (entry !== undefined && entry.view === view) {
        entry.seen = now
        continue
      }
      this.#index.add({ key: view.name, description: view.description, parameters: view.parameters })
      this.#indexed.set(view.name, { view, seen: now })
    }
    if (this.#indexed.size > definitions.length) {
      for (const [name, entry] of this.#indexed) {
        if (now - entry.seen < SWEEP_AFTER) continue
        this.#index.remove(name)
        this.#indexed.delete(name)
      }
    }
  }

  /** The best `limit` matches among `allowed` (names to their views). */
  search(query: string, limit: number, allowed: ReadonlyMap<string, ToolDefinition>): FoundTool[] {
    const hits = this.#index.search(query, { limit, filter: (key: string) => allowed.has(key) })
    const found: FoundTool[] = []
    for (const hit of hits) {
      const view = allowed.get(hit.key)
      if (view !== undefined)
        found.push({ name: view.name, description: view.description, declaration: declarationOf(view) })
    }
    return found
  }
}

const declarations = new WeakMap<ToolDefinition, string>()

/** A tool's declaration as the bindings render it, once per registration. */
export function declarationOf(view: ToolDefinition): string {
  let text = declarations.get(view)
  if (text === undefined) {
    text = renderToolDeclaration(bindingTool(view))
    declarations.set(view, text)
  }
  return text
}

/** The `search_tools` definition bound to one executor's services. */
export function createSearchTool(services: ToolExecutorServices): ToolDefinition {
  const catalog = new ToolCatalog()
  return Object.freeze({
    name: SEARCH_TOOLS,
    description: SEARCH_TOOLS_DESCRIPTION,
    parameters: SEARCH_TOOLS_PARAMETERS,
    output: Object.freeze({
      schema: SEARCH_TOOLS_OUTPUT,
      render: (_args: unknown, value: JsonValue) => [{ type: 'text' as const, text: searchResultText(foundOf(value)) }],
    }),
    isConcurrencySafe: () => true,
    execute: async (args: unknown, ctx: ToolRunContext): Promise<JsonValue> => {
      const { query, limit } = searchArgs(args)
      const callable = callableTools(services, ctx)
      catalog.sync([...callable.values()])
      let found: FoundTool[]
      try {
        found = catalog.search(query, limit, callable)
      } catch (error) {
        // The index refuses a query it cannot run (an invalid /regex/) with a TypeError that says why.
        if (error instanceof TypeError) throw new ToolArgsError(error.message, [], { cause: error })
        throw error
      }
      return Promise.resolve({ tools: found.map((t) => ({ ...t })) })
    },
  } satisfies ToolDefinition)
}

/** The arguments checked as the schema cannot say: a non-blank query of bounded length, a limit in range. */
function searchArgs(args: unknown): { query: string; limit: number } {
  const a = (typeof args === 'object' && args !== null ? args : {}) as { query?: unknown; limit?: unknown }
  if (typeof a.query !== 'string' || a.query.trim() === '')
    throw new ToolArgsError('query must be a non-empty string: what the tool should do, in a few words')
  if (a.query.length > MAX_QUERY_CHARS)
    throw new ToolArgsError(`query has ${a.query.length} characters; give at most ${MAX_QUERY_CHARS}`)
  const limit = a.limit ?? DEFAULT_SEARCH_LIMIT
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > MAX_SEARCH_LIMIT) {
    throw new ToolArgsError(`limit must be an integer from 1 to ${MAX_SEARCH_LIMIT}, not ${JSON.stringify(limit)}`)
  }
  return { query: a.query, limit }
}

function foundOf(value: JsonValue): FoundTool[] {
  const tools = typeof value === 'object' && value !== null && !Array.isArray(value) ? value.tools : undefined
  return Array.isArray(tools) ? (tools as unknown as FoundTool[]) : []
}
