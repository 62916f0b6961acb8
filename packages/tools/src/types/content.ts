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
