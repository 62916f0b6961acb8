import type { JsonValue } from '../json/types.js'
import type { ObjectJsonSchema } from '../schema/json-schema.js'

/** Opaque id of one model-requested (or nested) tool call. */
export type ToolCallId = string

export interface TextBlock {
  type: 'text'
  text: string
}

export interface ImageBlock {
  type: 'image'
  mimeType: string
  /** Base64 data. */
  data: string
}

/** Model-facing content. */
export type ContentBlock = TextBlock | ImageBlock

/** A raw model tool call: `arguments` is the model's JSON text, parsed losslessly by the executor. */
export interface ToolCallBlock {
  type: 'tool_call'
  id: ToolCallId
  name: string
  arguments: string
  /**
   * Set when a program the provider runs (its code execution) made the call rather than the model: a
   * hosted program. `withHostedPrograms` of `@ptc/ptc` (and the PTC executor) route such a call as a
   * sub-dispatch of that program; the native executor runs it as a direct call.
   */
  caller?: HostedCaller
}

/** The provider-hosted program that made a call (Anthropic's `caller`, OpenAI's `caller` of type `program`). */
export interface HostedCaller {
  /**
   * The provider's kind of program: Anthropic's code execution version (`code_execution_20250825`, …), OpenAI's
   * `program`.
   */
  readonly type: string
  /**
   * The program's id: Anthropic's `caller.tool_id` (its `server_tool_use` id), OpenAI's `caller_id` (its `program`
   * item's `call_id`).
   */
  readonly id: string
  /** The program's source, when the response that carried the call also carried the program. */
  readonly code?: string
}

/** Context appended after a tool result (deferred context, plugin instructions). */
export interface UserMessage {
  role: 'user'
  content: ContentBlock[]
  source?: { kind: 'plugin'; plugin: string }
  meta?: JsonValue
}

export interface ModelSelection {
  provider: string
  model: string
  reasoningEffort?: string
}

/** The model-facing declaration of a tool. */
export interface ToolSchema {
  name: string
  description: string
  parameters: ObjectJsonSchema
}
