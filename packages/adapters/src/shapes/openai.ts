import type { ContentBlock, ToolBatchResult, ToolCallBlock, ToolSchema } from '@ptc/tools'
import { dataUrl, fromWireToolName, wireSchemas } from './names.js'

/** A Chat Completions function tool (`tools[]` of a request). */
export interface OpenAITool {
  type: 'function'
  function: { name: string; description?: string; parameters: { [key: string]: unknown }; strict?: boolean }
}

/**
 * One `tool_calls[]` entry of an assistant message: a function call, or a custom tool call (free-text input;
 * ptc declares no custom tools, so such a call fails in the pipeline as any unknown call does).
 */
export type OpenAIToolCall =
  | { id: string; type: 'function'; function: { name: string; arguments: string } }
  | { id: string; type: 'custom'; custom: { name: string; input: string } }

export interface OpenAIAssistantMessage {
  role: 'assistant'
  content?: string | null
  tool_calls?: OpenAIToolCall[]
}

export type OpenAIUserContentPart = { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } }

/** A `role: 'tool'` message answering one tool call (text only in Chat Completions). */
export interface OpenAIToolMessage {
  role: 'tool'
  tool_call_id: string
  content: string
}

export interface OpenAIUserMessage {
  role: 'user'
  content: OpenAIUserContentPart[]
}

/**
 * `schemas()` (or `modelInput().schemas`) as Chat Completions tools; names made API-safe (`fs.read` -> `fs_read`).
 * @throws WireNameCollisionError when two tools would have the same API name
 */
export function toOpenAITools(schemas: readonly ToolSchema[]): OpenAITool[] {
  return wireSchemas(schemas).map(({ name, description, parameters }) => ({
    type: 'function',
    function: { name, description, parameters },
  }))
}

/**
 * The tool calls of an assistant message as ptc `ToolCallBlock`s (arguments
 * stay the model's raw JSON text). Pass the schemas' names to map API-safe
 * names back.
 */
export function fromOpenAIToolCalls(message: OpenAIAssistantMessage, names?: readonly string[]): ToolCallBlock[] {
  return (message.tool_calls ?? []).map((call) =>
    call.type === 'function'
      ? {
          type: 'tool_call',
          id: call.id,
          name: fromWireToolName(call.function.name, names),
          arguments: call.function.arguments,
        }
      : {
          type: 'tool_call',
          id: call.id,
          name: fromWireToolName(call.custom.name, names),
          arguments: call.custom.input,
        },
  )
}

/**
 * A batch's results as `role: 'tool'` messages in call order; images (which
 * tool messages cannot carry) and deferred contexts follow in one user message.
 */
export function toOpenAIToolMessages(batch: ToolBatchResult): Array<OpenAIToolMessage | OpenAIUserMessage> {
  const messages: Array<OpenAIToolMessage | OpenAIUserMessage> = []
  const extra: OpenAIUserContentPart[] = []
  for (const { callId, result } of batch.results) {
    const images = result.content.filter((b) => b.type === 'image')
    const text = result.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('\n')
    const note =
      images.length === 0
        ? ''
        : `${text === '' ? '' : '\n'}[${images.length} image(s) from this call follow in the next message]`
    messages.push({ role: 'tool', tool_call_id: callId, content: text + note })
    extra.push(...images.map(toPart))
  }
  for (const context of batch.additionalContexts) extra.push(...context.content.map(toPart))
  if (extra.length > 0) messages.push({ role: 'user', content: extra })
  return messages
}

function toPart(block: ContentBlock): OpenAIUserContentPart {
  return block.type === 'text'
    ? { type: 'text', text: block.text }
    : { type: 'image_url', image_url: { url: dataUrl(block) } }
}
