import type { ContentBlock, ToolBatchResult, ToolCallBlock, ToolSchema } from '@ptc/tools'
import { fromWireToolName, wireSchemas } from './names.js'

/** A Messages API client tool (`tools[]` of a request). */
export interface AnthropicTool {
  name: string
  description?: string
  input_schema: { type: 'object'; [key: string]: unknown }
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
  content: string | Array<AnthropicToolUseBlock | AnthropicTextBlock | { type: string }>
}

export interface AnthropicToolResultMessage {
  role: 'user'
  content: Array<AnthropicToolResultBlock | AnthropicTextBlock | AnthropicImageBlock>
}

/**
 * `schemas()` as Messages API tools; names made API-safe (`fs.read` -> `fs_read`).
 * @throws WireNameCollisionError when two tools would have the same API name
 */
export function toAnthropicTools(schemas: readonly ToolSchema[]): AnthropicTool[] {
  return wireSchemas(schemas).map(({ name, description, parameters }) => ({ name, description, input_schema: parameters }))
}

/** The `tool_use` blocks of an assistant message as ptc `ToolCallBlock`s (the input re-serialized as JSON text). */
export function fromAnthropicToolUses(message: AnthropicAssistantMessage, names?: readonly string[]): ToolCallBlock[] {
  if (typeof message.content === 'string') return []
  return message.content
    .filter((b): b is AnthropicToolUseBlock => b.type === 'tool_use')
    .map((b) => ({ type: 'tool_call', id: b.id, name: fromWireToolName(b.name, names), arguments: JSON.stringify(b.input ?? {}) }))
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
