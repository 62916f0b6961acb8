import type { ContentBlock, ToolBatchResult, ToolCallBlock, ToolSchema } from '@ptc/tools'
import { WireNameCollisionError } from '../errors.js'
import { deferralOf, shown, type DeferralOptions } from './deferral.js'
import { checkAllowedCallers, fromWireToolName, hostedCaller, wireSchemas } from './names.js'

/**
 * Who may call a client tool: the model itself (`direct`), or Claude's code execution of a given version
 * (`code_execution_20250825`, `code_execution_20260120`, …) running a program: programmatic tool calling.
 */
export type AnthropicAllowedCaller = 'direct' | `code_execution_${string}`

/** A Messages API client tool (`tools[]` of a request). */
export interface AnthropicTool<C extends AnthropicAllowedCaller = AnthropicAllowedCaller> {
  name: string
  description?: string
  input_schema: { type: 'object'; [key: string]: unknown }
  /** Set by `toAnthropicTools` when `allowedCallers` is given. */
  allowed_callers?: C[]
  /** Set (true) by `toAnthropicTools` on the tools it defers: only a tool search loads them. */
  defer_loading?: boolean
}

/** Which of the Messages API's tool search tools: BM25 (natural-language queries) or regex (Python `re` patterns). */
export type AnthropicToolSearch = 'bm25' | 'regex'

/** The tool search tool (a server tool) of a variant, as `toAnthropicTools` appends it. */
export type AnthropicToolSearchTool<S extends AnthropicToolSearch = AnthropicToolSearch> = S extends 'bm25'
  ? { type: 'tool_search_tool_bm25_20251119'; name: 'tool_search_tool_bm25' }
  : { type: 'tool_search_tool_regex_20251119'; name: 'tool_search_tool_regex' }

/** Options of `toAnthropicTools`. */
export interface AnthropicToolsOptions<
  C extends AnthropicAllowedCaller,
  S extends AnthropicToolSearch = AnthropicToolSearch,
> extends DeferralOptions {
  /**
   * Declare every tool with these `allowed_callers` (for example `['code_execution_20250825']`: only Claude's
   * code execution may call them; add `'direct'` to let the model call them too). The calls a program makes
   * carry its `caller`, which `fromAnthropicToolUses` keeps, so they run as sub-dispatches of that program.
   */
  allowedCallers?: readonly C[]
  /**
   * Append the tool search tool: `'bm25'` or `'regex'`; `false`: none (your own search returns `tool_reference`
   * blocks). Default: `'bm25'` when any tool is deferred.
   */
  toolSearch?: S | false
}

/** Options under which `toAnthropicTools` appends no tool search tool. */
type WithoutToolSearch<C extends AnthropicAllowedCaller> = AnthropicToolsOptions<C, never> &
  ({ deferLoading?: false } | { toolSearch: false })

export type AnthropicTextBlock = { type: 'text'; text: string }
/** The image types the Messages API takes. */
export type AnthropicImageMediaType = 'image/jpeg' | 'image/png' | 'image/gif' | 'image/webp'
export type AnthropicImageBlock = {
  type: 'image'
  source: { type: 'base64'; media_type: AnthropicImageMediaType; data: string }
}
export interface AnthropicToolUseBlock {
  type: 'tool_use'
  id: string
  name: string
  input: unknown
  /** Who made the call: `{ type: 'direct' }` (the model), or a code execution version and its `tool_id`. */
  caller?: { type: string; tool_id?: string } | null
}

/**
 * A server tool's call: code execution starting a program (its `id` is the `tool_id` of the calls the program
 * makes), or a tool search (its result, a `tool_search_tool_result` block, names the tools it loaded).
 */
export interface AnthropicServerToolUseBlock {
  type: 'server_tool_use'
  id: string
  name: string
  input: unknown
}
export interface AnthropicToolResultBlock {
  type: 'tool_result'
  tool_use_id: string
  content: Array<AnthropicTextBlock | AnthropicImageBlock>
  is_error?: boolean
}

/** An assistant message (or its `content`); only `tool_use` blocks matter here. */
export interface AnthropicAssistantMessage {
  role: 'assistant'
  content: string | Array<AnthropicToolUseBlock | AnthropicServerToolUseBlock | AnthropicTextBlock | { type: string }>
}

export interface AnthropicToolResultMessage {
  role: 'user'
  content: Array<AnthropicToolResultBlock | AnthropicTextBlock | AnthropicImageBlock>
}

/**
 * `schemas()` as Messages API tools; names made API-safe (`fs.read` -> `fs_read`), with `allowed_callers`
 * when `options.allowedCallers` is given. The tools `deferLoading` picks get `defer_loading: true`, and the
 * tool search tool is appended (`toolSearch`).
 * @throws WireNameCollisionError when two tools would have the same API name, or one the search tool's name
 * @throws TypeError when `allowedCallers` is empty or names something other than `direct` or `code_execution_…`,
 * or a deferral option is malformed
 */
export function toAnthropicTools<const C extends AnthropicAllowedCaller = never>(
  schemas: readonly ToolSchema[],
  options?: WithoutToolSearch<C>,
): Array<AnthropicTool<C>>
export function toAnthropicTools<
  const C extends AnthropicAllowedCaller = never,
  const S extends AnthropicToolSearch = 'bm25',
>(
  schemas: readonly ToolSchema[],
  options: AnthropicToolsOptions<C, S>,
): Array<AnthropicTool<C> | AnthropicToolSearchTool<S>>
export function toAnthropicTools<const C extends AnthropicAllowedCaller>(
  schemas: readonly ToolSchema[],
  options: AnthropicToolsOptions<C> = {},
): Array<AnthropicTool<C> | AnthropicToolSearchTool> {
  const callers = checkAllowedCallers(
    options.allowedCallers,
    (c) => c === 'direct' || /^code_execution_\w+$/.test(c),
    "'direct' or a code execution version such as 'code_execution_20250825'",
  )
  const deferred = deferralOf(options)
  const { toolSearch } = options
  if (toolSearch !== undefined && toolSearch !== false && toolSearch !== 'bm25' && toolSearch !== 'regex') {
    throw new TypeError(`toolSearch must be 'bm25', 'regex' or false, not ${shown(toolSearch)}`)
  }
  const tools = wireSchemas(schemas).map(
    ({ name, description, parameters }, i): AnthropicTool<C> => ({
      name,
      description,
      input_schema: parameters,
      ...(callers !== undefined && { allowed_callers: [...callers] }),
      ...(deferred?.((schemas[i] as ToolSchema).name) === true && { defer_loading: true }),
    }),
  )
  const search = toolSearch ?? (tools.some((t) => t.defer_loading === true) ? 'bm25' : false)
  if (search === false) return tools
  const searchTool = TOOL_SEARCH[search]
  const taken = tools.findIndex((t) => t.name === searchTool.name)
  if (taken >= 0) {
    const added = `Anthropic's tool search tool (toolSearch: '${search}')`
    throw new WireNameCollisionError(searchTool.name, searchTool.name, (schemas[taken] as ToolSchema).name, added)
  }
  return [...tools, { ...searchTool }]
}

const TOOL_SEARCH: { readonly [S in AnthropicToolSearch]: AnthropicToolSearchTool<S> } = {
  bm25: { type: 'tool_search_tool_bm25_20251119', name: 'tool_search_tool_bm25' },
  regex: { type: 'tool_search_tool_regex_20251119', name: 'tool_search_tool_regex' },
}

/**
 * The `tool_use` blocks of an assistant message as ptc `ToolCallBlock`s (the input re-serialized as JSON text).
 * A call made by Claude's code execution keeps its `caller` (`{ type, id: tool_id, code? }`, the code read from
 * the message's `server_tool_use` block when it is there), so the executor runs it as a sub-dispatch of that
 * program; a direct call has none. Server tools' blocks (a tool search's `server_tool_use` and
 * `tool_search_tool_result`) are not calls: the API ran them. Keep them in the message you send back.
 */
export function fromAnthropicToolUses(message: AnthropicAssistantMessage, names?: readonly string[]): ToolCallBlock[] {
  if (typeof message.content === 'string') return []
  const programs = new Map<string, string>()
  for (const b of message.content) {
    if (b.type !== 'server_tool_use') continue
    const { id, input } = b as AnthropicServerToolUseBlock
    const code = typeof input === 'object' && input !== null ? (input as { code?: unknown }).code : undefined
    if (typeof id === 'string' && typeof code === 'string') programs.set(id, code)
  }
  return message.content
    .filter((b): b is AnthropicToolUseBlock => b.type === 'tool_use')
    .map((b) => {
      const call: ToolCallBlock = {
        type: 'tool_call',
        id: b.id,
        name: fromWireToolName(b.name, names),
        arguments: JSON.stringify(b.input ?? {}),
      }
      const caller = b.caller
      return caller === undefined || caller === null || caller.type === 'direct'
        ? call
        : { ...call, caller: hostedCaller(caller.type, caller.tool_id, programs) }
    })
}

/**
 * A batch's results as one user message: a `tool_result` block per call in
 * call order (`is_error` on failures, images as base64 image blocks), then the
 * deferred contexts' blocks.
 */
export function toAnthropicToolResults(batch: ToolBatchResult): AnthropicToolResultMessage {
  const content: AnthropicToolResultMessage['content'] = batch.results.map(({ callId, result }) => ({
    type: 'tool_result',
    tool_use_id: callId,
    content: result.content.map(toBlock),
    ...(result.isError && { is_error: true }),
  }))
  for (const context of batch.additionalContexts) content.push(...context.content.map(toBlock))
  return { role: 'user', content }
}

const MEDIA_TYPES: readonly string[] = [
  'image/jpeg',
  'image/png',
  'image/gif',
  'image/webp',
] satisfies AnthropicImageMediaType[]

/**
 * A content block as a Messages API block; an image of a type the API does not take is named in a text block instead.
 */
function toBlock(block: ContentBlock): AnthropicTextBlock | AnthropicImageBlock {
  if (block.type === 'text') return { type: 'text', text: block.text }
  if (!MEDIA_TYPES.includes(block.mimeType))
    return {
      type: 'text',
      text: `[an image of type ${block.mimeType} was left out: the Messages API takes JPEG, PNG, GIF or WebP]`,
    }
  return {
    type: 'image',
    source: { type: 'base64', media_type: block.mimeType as AnthropicImageMediaType, data: block.data },
  }
}
