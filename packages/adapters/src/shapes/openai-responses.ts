import type { ContentBlock, ToolBatchResult, ToolCallBlock, ToolSchema } from '@ptc/tools'
import { deferralOf, shown, type DeferralOptions } from './deferral.js'
import { checkAllowedCallers, dataUrl, fromWireToolName, hostedCaller, wireSchemas } from './names.js'

/**
 * Who may call a function tool: the model itself (`direct`), or a program it wrote (`programmatic`: programmatic tool
 * calling).
 */
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
  /** Set (true) by `toOpenAIResponsesTools` on the functions it defers: only the tool search loads them. */
  defer_loading?: boolean
}

/** The hosted tool search tool: the API searches the deferred functions and loads those the model asks for. */
export interface OpenAIResponsesToolSearchTool {
  type: 'tool_search'
}

/** Options of `toOpenAIResponsesTools`. */
export interface OpenAIResponsesToolsOptions extends DeferralOptions {
  /**
   * Declare every function with these `allowed_callers` (`['programmatic']`: only a program the model wrote may
   * call them; add `'direct'` to let the model call them too). The calls a program makes carry its `caller`,
   * which `fromOpenAIResponsesOutput` keeps, so they run as sub-dispatches of that program.
   */
  allowedCallers?: readonly OpenAIResponsesAllowedCaller[]
  /** Append the hosted tool search tool (`{ type: 'tool_search' }`). Default: when any function is deferred. */
  toolSearch?: boolean
}

/** A `function_call` item of a response's `output` (other items are ignored). */
export interface OpenAIResponsesFunctionCall {
  type: 'function_call'
  call_id: string
  name: string
  arguments: string
  /**
   * Who made the call: `{ type: 'direct' }` (the model), or `{ type: 'program', caller_id }` (a program item's
   * `call_id`).
   */
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
export type OpenAIResponsesOutputPart =
  | { type: 'input_text'; text: string }
  | { type: 'input_image'; image_url: string; detail: 'auto' }

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
 * `allowed_callers` is set when `options.allowedCallers` is given. The functions `deferLoading` picks get
 * `defer_loading: true`, and the hosted tool search tool is appended (`toolSearch`).
 * @throws WireNameCollisionError when two tools would have the same API name
 * @throws TypeError when `allowedCallers` is empty or names something other than `direct` or `programmatic`,
 * or a deferral option is malformed
 */
export function toOpenAIResponsesTools(
  schemas: readonly ToolSchema[],
  options?: OpenAIResponsesToolsOptions & ({ deferLoading?: false; toolSearch?: false } | { toolSearch: false }),
): OpenAIResponsesTool[]
export function toOpenAIResponsesTools(
  schemas: readonly ToolSchema[],
  options: OpenAIResponsesToolsOptions,
): Array<OpenAIResponsesTool | OpenAIResponsesToolSearchTool>
export function toOpenAIResponsesTools(
  schemas: readonly ToolSchema[],
  options: OpenAIResponsesToolsOptions = {},
): Array<OpenAIResponsesTool | OpenAIResponsesToolSearchTool> {
  const callers = checkAllowedCallers(
    options.allowedCallers,
    (c) => c === 'direct' || c === 'programmatic',
    "'direct' or 'programmatic'",
  )
  const deferred = deferralOf(options)
  const { toolSearch } = options
  if (toolSearch !== undefined && typeof toolSearch !== 'boolean') {
    throw new TypeError(`toolSearch must be true or false, not ${shown(toolSearch)}`)
  }
  const tools = wireSchemas(schemas).map(
    ({ name, description, parameters }, i): OpenAIResponsesTool => ({
      type: 'function',
      name,
      description,
      parameters,
      strict: strictCompatible(parameters),
      ...(callers !== undefined && { allowed_callers: [...callers] }),
      ...(deferred?.((schemas[i] as ToolSchema).name) === true && { defer_loading: true }),
    }),
  )
  return (toolSearch ?? tools.some((t) => t.defer_loading === true)) ? [...tools, { type: 'tool_search' }] : tools
}

/**
 * The `function_call` items of a response's `output` as ptc `ToolCallBlock`s (arguments stay the model's
 * raw JSON text; the id is the item's `call_id`). Pass the schemas' names to map API-safe names back. A call
 * a program made keeps its `caller` (`{ type: 'program', id: caller_id, code? }`, the code read from the
 * output's `program` item when it is there), so the executor runs it as a sub-dispatch of that program.
 * Other items are not calls: a hosted tool search's `tool_search_call` and `tool_search_output` ran on the API
 * (a client-executed `tool_search_call` asks for a `tool_search_output`, which ptc does not make).
 */
export function fromOpenAIResponsesOutput(
  output: readonly { type: string }[],
  names?: readonly string[],
): ToolCallBlock[] {
  const programs = new Map<string, string>()
  for (const item of output) {
    if (item.type !== 'program') continue
    const { call_id: id, code } = item as Partial<OpenAIResponsesProgram>
    if (typeof id === 'string' && typeof code === 'string') programs.set(id, code)
  }
  return output
    .filter((item): item is OpenAIResponsesFunctionCall => item.type === 'function_call')
    .map((item) => {
      const call: ToolCallBlock = {
        type: 'tool_call',
        id: item.call_id,
        name: fromWireToolName(item.name, names),
        arguments: item.arguments,
      }
      const caller = item.caller
      return caller === undefined || caller === null || caller.type === 'direct'
        ? call
        : { ...call, caller: hostedCaller(caller.type, (caller as { caller_id?: unknown }).caller_id, programs) }
    })
}

/** The output items a request without `previous_response_id` repeats (`toOpenAIResponsesInput`'s `output`). */
export type OpenAIResponsesCarriedType = (typeof CARRIED_TYPES)[number]

const CARRIED_TYPES = [
  'message',
  'reasoning',
  'function_call',
  'tool_search_call',
  'tool_search_output',
  'program',
  'program_output',
] as const
const CARRIED: ReadonlySet<string> = new Set(CARRIED_TYPES)

/** Options of `toOpenAIResponsesInput`. */
export interface OpenAIResponsesInputOptions<O extends { type: string }> {
  /**
   * The response's `output`, when the API does not keep the conversation (`store: false`, no
   * `previous_response_id`): the next request must repeat its items, and the functions a tool search loaded are
   * defined only in its `tool_search_output`. Leave it out with `previous_response_id`.
   */
  output: readonly O[]
}

/**
 * A batch's results as input items of the next request: one `function_call_output` per call in call order
 * (text as a string; with images, text and image parts), then the deferred contexts as one user message.
 * A failure's output is its `Error: …` text (the Responses API has no error flag). With `options.output`, the
 * response's messages, reasoning, tool search, program and `function_call` items come first, in order.
 */
export function toOpenAIResponsesInput(
  batch: ToolBatchResult,
): Array<OpenAIResponsesFunctionCallOutput | OpenAIResponsesUserMessage>
export function toOpenAIResponsesInput<O extends { type: string }>(
  batch: ToolBatchResult,
  options: OpenAIResponsesInputOptions<O>,
): Array<
  Extract<O, { type: OpenAIResponsesCarriedType }> | OpenAIResponsesFunctionCallOutput | OpenAIResponsesUserMessage
>
export function toOpenAIResponsesInput(
  batch: ToolBatchResult,
  options?: OpenAIResponsesInputOptions<{ type: string }>,
): Array<{ type: string }> {
  const output = options?.output
  if (options !== undefined && !Array.isArray(output)) {
    throw new TypeError(`output must be a response's output items (an array), not ${shown(output)}`)
  }
  const items: Array<OpenAIResponsesFunctionCallOutput | OpenAIResponsesUserMessage> = batch.results.map(
    ({ callId, result }) => ({
      type: 'function_call_output',
      call_id: callId,
      output: result.content.every((b) => b.type === 'text')
        ? result.content.map((b) => b.text).join('\n')
        : result.content.map(toPart),
    }),
  )
  const context = batch.additionalContexts.flatMap((m) => m.content.map(toPart))
  if (context.length > 0) items.push({ type: 'message', role: 'user', content: context })
  return output === undefined ? items : [...output.filter((item) => CARRIED.has(item.type)), ...items]
}

function toPart(block: ContentBlock): OpenAIResponsesOutputPart {
  return block.type === 'text'
    ? { type: 'input_text', text: block.text }
    : { type: 'input_image', image_url: dataUrl(block), detail: 'auto' }
}

/** The keywords strict mode takes (structured outputs' supported subset). */
const STRICT_KEYWORDS = new Set([
  'type',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'enum',
  'const',
  'anyOf',
  'description',
  'title',
])

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
      if (n['additionalProperties'] !== false || Object.keys(properties).some((key) => !required.includes(key)))
        return false
      stack.push(...Object.values(properties))
    }
    if (n['items'] !== undefined) stack.push(n['items'])
    if (Array.isArray(n['anyOf'])) stack.push(...(n['anyOf'] as unknown[]))
  }
  return true
}
