import type { ContentBlock, ToolBatchResult, ToolCallBlock, ToolSchema } from '@ptc/tools'
import { checkAllowedCallers, dataUrl, fromWireToolName, hostedCaller, wireSchemas } from './names.js'

/** Who may call a function tool: the model itself (`direct`), or a program it wrote (`programmatic`: programmatic tool calling). */
export type OpenAIResponsesAllowedCaller = 'direct' | 'programmatic'

/** A Responses API function tool (`tools[]` of `responses.create`). */
export interface OpenAIResponsesTool {
  type: 'function'
  name: string
  description?: string
  parameters: { [key: string]: unknown }
  /** True where the schema meets strict mode's rules (see `toOpenAIResponsesTools`). */
  strict: boolean
  /** Set by `toOpenAIResponsesTools` when `allowedCallers` is given. */
  allowed_callers?: OpenAIResponsesAllowedCaller[]
}

/** Options of `toOpenAIResponsesTools`. */
export interface OpenAIResponsesToolsOptions {
  /**
   * Declare every function with these `allowed_callers` (`['programmatic']`: only a program the model wrote may
   * call them; add `'direct'` to let the model call them too). The calls a program makes carry its `caller`,
   * which `fromOpenAIResponsesOutput` keeps, so they run as sub-dispatches of that program.
   */
  allowedCallers?: readonly OpenAIResponsesAllowedCaller[]
}

/** A `function_call` item of a response's `output` (other items are ignored). */
export interface OpenAIResponsesFunctionCall {
  type: 'function_call'
  call_id: string
  name: string
  arguments: string
  /** Who made the call: `{ type: 'direct' }` (the model), or `{ type: 'program', caller_id }` (a program item's `call_id`). */
  caller?: { type: 'direct' } | { type: 'program'; caller_id: string } | null
}

/** A `program` item of a response's `output`: the program whose calls name its `call_id` as their `caller_id`. */
export interface OpenAIResponsesProgram {
  type: 'program'
  id: string
  call_id: string
  code: string
}

/** What a function's output may hold: text, and images as data URLs. */
export type OpenAIResponsesOutputPart = { type: 'input_text'; text: string } | { type: 'input_image'; image_url: string; detail: 'auto' }

/** The answer to one `function_call`, as an input item of the next request. */
export interface OpenAIResponsesFunctionCallOutput {
  type: 'function_call_output'
  call_id: string
  /** The text, or (when the result has images) its text and images as parts. */
  output: string | OpenAIResponsesOutputPart[]
}

/** A user message input item (a batch's deferred contexts). */
export interface OpenAIResponsesUserMessage {
  type: 'message'
  role: 'user'
  content: OpenAIResponsesOutputPart[]
}

/**
 * `schemas()` (or `modelInput().schemas`) as Responses API function tools, names made API-safe
 * (`fs.read` -> `fs_read`). `strict` is true exactly where the schema already meets strict mode's rules
 * (every object closed with `additionalProperties: false` and every property required, only the keywords strict
 * mode takes), so the API enforces it; otherwise false, and the pipeline still validates every call.
 * `allowed_callers` is set when `options.allowedCallers` is given.
 * @throws WireNameCollisionError when two tools would have the same API name
 * @throws TypeError when `allowedCallers` is empty or names something other than `direct` or `programmatic`
 */
export function toOpenAIResponsesTools(schemas: readonly ToolSchema[], options: OpenAIResponsesToolsOptions = {}): OpenAIResponsesTool[] {
  const callers = checkAllowedCallers(options.allowedCallers, (c) => c === 'direct' || c === 'programmatic', "'direct' or 'programmatic'")
  return wireSchemas(schemas).map(({ name, description, parameters }) => ({
    type: 'function',
    name,
    description,
    parameters,
    strict: strictCompatible(parameters),
    ...(callers !== undefined && { allowed_callers: [...callers] }),
  }))
}

/**
 * The `function_call` items of a response's `output` as ptc `ToolCallBlock`s (arguments stay the model's
 * raw JSON text; the id is the item's `call_id`). Pass the schemas' names to map API-safe names back. A call
 * a program made keeps its `caller` (`{ type: 'program', id: caller_id, code? }`, the code read from the
 * output's `program` item when it is there), so the executor runs it as a sub-dispatch of that program.
 */
export function fromOpenAIResponsesOutput(output: readonly { type: string }[], names?: readonly string[]): ToolCallBlock[] {
  const programs = new Map<string, string>()
  for (const item of output) {
    if (item.type !== 'program') continue
    const { call_id: id, code } = item as Partial<OpenAIResponsesProgram>
    if (typeof id === 'string' && typeof code === 'string') programs.set(id, code)
  }
  return output
    .filter((item): item is OpenAIResponsesFunctionCall => item.type === 'function_call')
    .map((item) => {
      const call: ToolCallBlock = { type: 'tool_call', id: item.call_id, name: fromWireToolName(item.name, names), arguments: item.arguments }
      const caller = item.caller
      return caller === undefined || caller === null || caller.type === 'direct' ? call : { ...call, caller: hostedCaller(caller.type, (caller as { caller_id?: unknown }).caller_id, programs) }
    })
}

/**
 * A batch's results as input items of the next request: one `function_call_output` per call in call order
 * (text as a string; with images, text and image parts), then the deferred contexts as one user message.
 * A failure's output is its `Error: …` text (the Responses API has no error flag).
 */
export function toOpenAIResponsesInput(batch: ToolBatchResult): Array<OpenAIResponsesFunctionCallOutput | OpenAIResponsesUserMessage> {
  const items: Array<OpenAIResponsesFunctionCallOutput | OpenAIResponsesUserMessage> = batch.results.map(({ callId, result }) => ({
    type: 'function_call_output',
    call_id: callId,
    output: result.content.every((b) => b.type === 'text') ? result.content.map((b) => b.text).join('\n') : result.content.map(toPart),
  }))
  const context = batch.additionalContexts.flatMap((m) => m.content.map(toPart))
  if (context.length > 0) items.push({ type: 'message', role: 'user', content: context })
  return items
}

function toPart(block: ContentBlock): OpenAIResponsesOutputPart {
  return block.type === 'text' ? { type: 'input_text', text: block.text } : { type: 'input_image', image_url: dataUrl(block), detail: 'auto' }
}

/** The keywords strict mode takes (structured outputs' supported subset). */
const STRICT_KEYWORDS = new Set(['type', 'properties', 'required', 'additionalProperties', 'items', 'enum', 'const', 'anyOf', 'description', 'title'])

/** Whether a JSON Schema meets strict mode's rules as it is. */
export function strictCompatible(schema: unknown): boolean {
  const stack: unknown[] = [schema]
  while (stack.length > 0) {
    const node = stack.pop()
    if (typeof node !== 'object' || node === null || Array.isArray(node)) return false
    const n = node as Record<string, unknown>
    for (const key of Object.keys(n)) if (!STRICT_KEYWORDS.has(key)) return false
    const types = Array.isArray(n['type']) ? (n['type'] as unknown[]) : [n['type']]
    if (types.includes('object') || n['properties'] !== undefined) {
      const properties = (n['properties'] ?? {}) as Record<string, unknown>
      const required = Array.isArray(n['required']) ? (n['required'] as unknown[]) : []
      if (n['additionalProperties'] !== false || Object.keys(properties).some((key) => !required.includes(key))) return false
      stack.push(...Object.values(properties))
    }
    if (n['items'] !== undefined) stack.push(n['items'])
    if (Array.isArray(n['anyOf'])) stack.push(...(n['anyOf'] as unknown[]))
  }
  return true
}
