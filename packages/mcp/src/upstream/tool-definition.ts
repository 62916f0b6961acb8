import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js'
import { prettyJson } from '@ptc/ptc'
import type { ContentBlock, JsonSchemaNode, JsonValue, ToolDefinition, ToolExecutionToken } from '@ptc/tools'
import { convertJsonSchema, convertObjectJsonSchema, textHead, type SchemaWarning } from '@ptc/tools'
import { nestsDeeperThan } from '@ptc/sandbox/backend'
import { UpstreamToolError } from '../errors.js'
import { fromMcpContent, textOf } from './content.js'
import type { UpstreamConnection } from './connection.js'

/** A registrable definition for one upstream tool, or why it was skipped; plus the conversion warnings. */
export interface UpstreamToolConversion {
  readonly definition?: ToolDefinition
  readonly warnings: readonly string[]
}

const TEXT_OUTPUT: JsonSchemaNode = Object.freeze({ type: 'string', description: 'The text the tool returned.' })

/**
 * The deepest JSON nesting of an upstream tool's input or output schema: a real schema stays far below (each
 * schema level is two, `properties` and the property), and the conversion, validation and declarations that
 * walk a schema recursively are safe below it. A hostile upstream's 3 000-level schema overflowed the stack
 * in the conversion and took every tool of that upstream down with it.
 */
export const MAX_UPSTREAM_SCHEMA_DEPTH = 128

/**
 * The longest input or output schema of an upstream tool, in characters of JSON: a tool with a longer one is
 * skipped with a warning. Its declaration goes into the text the model reads (real schemas, enums included, take
 * a few thousand characters).
 */
export const MAX_UPSTREAM_SCHEMA_CHARS = 64 * 1024

/**
 * The longest description of an upstream tool the model reads, in characters: a longer one is cut there, with
 * a warning.
 */
export const MAX_UPSTREAM_DESCRIPTION_CHARS = 16 * 1024

/**
 * Turn one upstream tool into a `ToolDefinition` named `<namespace>.<tool>`.
 * Its input schema is converted to the enforced subset (the upstream still
 * validates); with an `outputSchema`, the program receives `structuredContent`
 * typed by the converted schema, otherwise the text of the result as a string.
 * The upstream's own content blocks (images included) are what a model-direct
 * call shows. Tools marked `readOnlyHint` may overlap with other safe calls.
 */
export function upstreamToolDefinition(
  connection: UpstreamConnection,
  namespace: string,
  tool: Tool,
): UpstreamToolConversion {
  const name = `${namespace}.${tool.name}`
  const warnings: string[] = []
  const note = (what: string, w: SchemaWarning): void =>
    void warnings.push(`${name}: ${what} ${w.path === '' ? '(root)' : w.path}: ${w.message}`)
  for (const [what, schema] of [
    ['input', tool.inputSchema],
    ['output', tool.outputSchema],
  ] as const) {
    if (nestsDeeperThan(schema, MAX_UPSTREAM_SCHEMA_DEPTH))
      return {
        warnings: [`skipped tool ${name}: its ${what} schema nests more than ${MAX_UPSTREAM_SCHEMA_DEPTH} levels deep`],
      }
    const chars = schema === undefined ? 0 : JSON.stringify(schema).length
    if (chars > MAX_UPSTREAM_SCHEMA_CHARS)
      return {
        warnings: [
          `skipped tool ${name}: its ${what} schema is ${chars} characters of JSON, more than ` +
            `${MAX_UPSTREAM_SCHEMA_CHARS}`,
        ],
      }
  }
  const input = convertObjectJsonSchema(tool.inputSchema)
  for (const w of input.warnings) note('input', w)
  if (!input.ok) return { warnings: [...warnings, `skipped tool ${name}: ${input.reason}`] }
  let output = TEXT_OUTPUT
  let structured = false
  if (tool.outputSchema !== undefined) {
    const converted = convertJsonSchema(tool.outputSchema)
    for (const w of converted.warnings) note('output', w)
    output = converted.schema
    structured = true
  }
  const contents = new WeakMap<ToolExecutionToken, ContentBlock[]>()
  let description =
    tool.description ?? tool.title ?? tool.annotations?.title ?? `${tool.name} (from ${connection.label})`
  if (description.length > MAX_UPSTREAM_DESCRIPTION_CHARS) {
    warnings.push(
      `${name}: its description (${description.length} characters) is cut to its first ` +
        `${MAX_UPSTREAM_DESCRIPTION_CHARS}`,
    )
    description = `${textHead(description, MAX_UPSTREAM_DESCRIPTION_CHARS)}…`
  }
  const definition: ToolDefinition = {
    name,
    description,
    parameters: input.schema,
    output: Object.freeze({
      schema: output,
      render: (_args: unknown, value: JsonValue): ContentBlock[] => [
        { type: 'text', text: typeof value === 'string' ? value : prettyJson(value) },
      ],
    }),
    projectContent: (exec) => {
      const content = contents.get(exec.token)
      contents.delete(exec.token)
      return content
    },
    execute: async (args, ctx) => {
      const result = await connection.call(tool.name, args, ctx.signal)
      const content = fromMcpContent(result.content)
      if (result.isError === true) throw new UpstreamToolError(textOf(content) || `${name} failed`)
      const value = structured ? structuredValue(name, result, content) : textOf(content)
      if (content.length > 0) contents.set(ctx.token, content)
      return value
    },
  }
  if (tool.annotations?.readOnlyHint === true) definition.isConcurrencySafe = () => true
  return { definition: Object.freeze(definition), warnings }
}

/** `structuredContent`, or (an older server) the single text block parsed as JSON. */
function structuredValue(name: string, result: CallToolResult, content: readonly ContentBlock[]): unknown {
  if (result.structuredContent !== undefined) return result.structuredContent
  const text = textOf(content)
  try {
    return JSON.parse(text) as unknown
  } catch {
    throw new UpstreamToolError(`${name} declares an outputSchema but returned no structuredContent`)
  }
}
