import { parseJsonArguments } from '../json/parse.js'
import type { JsonValue } from '../json/types.js'
import type { ToolCallBlock } from '../types/content.js'

/**
 * A raw call read for dispatch: the block (rebuilt when malformed), its parsed arguments, or why they could not be
 * read.
 */
export interface ParsedToolCall {
  readonly call: ToolCallBlock
  /** The arguments parsed losslessly (fresh and frozen), or null when `argumentsError` says why not. */
  readonly args: JsonValue
  /** Set when the call fails as `INVALID_ARGS` before any policy (pass it as the dispatch's `argumentsError`). */
  readonly argumentsError: string | undefined
}

/**
 * Read one raw model call: its argument text parsed losslessly (empty text is `{}`). A malformed block or
 * a bad text fails that call only: its `argumentsError` says why.
 */
export function parseToolCall(call: ToolCallBlock | undefined): ParsedToolCall {
  if (typeof call !== 'object' || call === null || typeof call.id !== 'string' || typeof call.name !== 'string') {
    const id = typeof call?.id === 'string' ? call.id : ''
    return {
      call: { type: 'tool_call', id, name: String(call?.name ?? ''), arguments: '' },
      args: null,
      argumentsError: 'malformed tool call block',
    }
  }
  if (typeof call.arguments !== 'string')
    return { call, args: null, argumentsError: 'tool call arguments must be JSON text' }
  const text = call.arguments.trim() === '' ? '{}' : call.arguments
  const parsed = parseJsonArguments(text)
  return parsed.ok
    ? { call, args: parsed.value, argumentsError: undefined }
    : { call, args: null, argumentsError: `arguments are not valid JSON: ${parsed.message}` }
}
