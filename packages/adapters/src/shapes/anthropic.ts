import type { ContentBlock, ToolBatchResult, ToolCallBlock, ToolSchema } from '@ptc/tools'
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
}

/** Options of `toAnthropicTools`. */
export interface AnthropicToolsOptions<C extends AnthropicAllowedCaller> {
  /**
   * Declare every tool with these `allowed_callers` (for example `['code_execution_20250825']`: only Claude's
   * code execution may call them; add `'direct'` to let the model call them too). The calls a program makes
   * carry its `caller`, which `fromAnthropicToolUses` keeps, so they run as sub-dispatches of that program.
   */
  allowedCallers?: readonly C[]
}

export type AnthropicTextBlock = { type: 'text'; text: string }
/** The image types the Messages API takes. */
export type AnthropicImageMediaType = 'image/jpeg' | 'image/png' | 'image/gif' | 'image/webp'
export type AnthropicImageBlock = { type: 'image'; source: { type: 'base64'; media_type: AnthropicImageMediaType; data: string } }
export interface AnthropicToolUseBlock {
  type: 'tool_use'
  id: string
  name: string
  input: unknown
  /** Who made the call: `{ type: 'direct' }` (the model), or a code execution version and its `tool_id`. */
  caller?: { type: string; tool_id?: string } | null
}

/** The code execution block that starts a program (its `id` is the `tool_id` of the calls the program makes). */
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
 * when `options.allowedCallers` is given.
 * @throws WireNameCollisionError when two tools would have the same API name
 * @throws TypeError when `allowedCallers` is empty or names something other than `direct` or `code_execution_…`
 */
export function toAnthropicTools<const C extends AnthropicAllowedCaller = never>(schemas: readonly ToolSchema[], options: AnthropicToolsOptions<C> = {}): Array<AnthropicTool<C>> {
  const callers = checkAllowedCallers(options.allowedCallers, (c) => c === 'direct' || /^code_execution_\w+$/.test(c), "'direct' or a code execution version such as 'code_execution_20250825'")
  return wireSchemas(schemas).map(({ name, description, parameters }) => ({ name, description, input_schema: parameters, ...(callers !== undefined && { allowed_callers: [...callers] }) }))
}

/**
 * The `tool_use` blocks of an assistant message as ptc `ToolCallBlock`s (the input re-serialized as JSON text).
 * A call made by Claude's code execution keeps its `caller` (`{ type, id: tool_id, code? }`, the code read from
 * the message's `server_tool_use` block when it is there), so the executor runs it as a sub-dispatch of that
 * program; a direct call has none.
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
      const call: ToolCallBlock = { type: 'tool_call', id: b.id, name: fromWireToolName(b.name, names), arguments: JSON.stringify(b.input ?? {}) }
      const caller = b.caller
      return caller === undefined || caller === null || caller.type === 'direct' ? call : { ...call, caller: hostedCaller(caller.type, caller.tool_id, programs) }
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

const MEDIA_TYPES: readonly string[] = ['image/jpeg', 'image/png', 'image/gif', 'image/webp'] satisfies AnthropicImageMediaType[]

/** A content block as a Messages API block; an image of a type the API does not take is named in a text block instead. */
function toBlock(block: ContentBlock): AnthropicTextBlock | AnthropicImageBlock {
  if (block.type === 'text') return { type: 'text', text: block.text }
  if (!MEDIA_TYPES.includes(block.mimeType)) return { type: 'text', text: `[an image of type ${block.mimeType} was left out: the Messages API takes JPEG, PNG, GIF or WebP]` }
  return { type: 'image', source: { type: 'base64', media_type: block.mimeType as AnthropicImageMediaType, data: block.data } }
}
