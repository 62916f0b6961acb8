import { asSchema, type ToolSet } from 'ai'
import { convertJsonSchema, convertObjectJsonSchema } from '@ptc/tools'
import { prettyJson } from '@ptc/ptc'
import { ToolArgsError, type JsonSchemaNode, type JsonValue, type ToolDefinition } from '@ptc/tools'
import { z } from 'zod'

/** Options of {@link fromAiSdkTools}. */
export interface FromAiSdkToolsOptions {
  /** Conversion warnings and skipped tools. Default: ignored. */
  readonly onWarning?: (message: string) => void
  /** Names of tools whose calls may overlap (the AI SDK has no such flag). */
  readonly concurrencySafe?: readonly string[]
}

/**
 * AI SDK tools (zod or JSON schemas) as ptc `ToolDefinition`s. Input schemas
 * go through `z.toJSONSchema` (zod 4) or the AI SDK's `asSchema`, then the
 * converter to the enforced subset; arguments are still validated by the
 * tool's own schema before its `execute`. The output is any JSON unless the
 * tool declares an `outputSchema`. A tool without `execute`, or whose schema
 * cannot be used, is skipped with a warning.
 */
export function fromAiSdkTools(tools: Readonly<ToolSet>, options: FromAiSdkToolsOptions = {}): ToolDefinition[] {
  const warn = options.onWarning ?? (() => undefined)
  const out: ToolDefinition[] = []
  for (const [name, source] of Object.entries(tools)) {
    const execute = (
      source as {
        execute?: (input: unknown, options: { toolCallId: string; messages: []; abortSignal: AbortSignal }) => unknown
      }
    ).execute
    if (typeof execute !== 'function') {
      warn(`skipped tool ${name}: it has no execute function`)
      continue
    }
    const inputJson = toJsonSchema(source.inputSchema)
    if (inputJson === undefined) {
      warn(`skipped tool ${name}: its input schema has no synchronous JSON Schema`)
      continue
    }
    const input = convertObjectJsonSchema(inputJson)
    for (const w of input.warnings) warn(`${name}: input ${w.path || '(root)'}: ${w.message}`)
    if (!input.ok) {
      warn(`skipped tool ${name}: ${input.reason}`)
      continue
    }
    let output: JsonSchemaNode = {}
    if (source.outputSchema !== undefined) {
      const outputJson = toJsonSchema(source.outputSchema)
      const converted = outputJson === undefined ? undefined : convertJsonSchema(outputJson)
      for (const w of converted?.warnings ?? []) warn(`${name}: output ${w.path || '(root)'}: ${w.message}`)
      output = converted?.schema ?? {}
    }
    const validator = asSchema(source.inputSchema as Parameters<typeof asSchema>[0])
    const definition: ToolDefinition = {
      name,
      description: source.description ?? source.title ?? name,
      parameters: input.schema,
      output: Object.freeze({
        schema: output,
        render: (_args: unknown, value: JsonValue) => [
          { type: 'text' as const, text: typeof value === 'string' ? value : prettyJson(value) },
        ],
      }),
      execute: async (args, ctx) => {
        let value = args
        if (validator.validate !== undefined) {
          const checked = await validator.validate(args)
          if (!checked.success)
            throw new ToolArgsError(`invalid arguments: ${checked.error.message}`, [
              { path: '', message: checked.error.message },
            ])
          value = checked.value
        }
        const result = await lastOf(
          execute.call(source, value, { toolCallId: ctx.callId, messages: [], abortSignal: ctx.signal }),
        )
        return result === undefined ? null : result
      },
    }
    if (options.concurrencySafe?.includes(name) === true) definition.isConcurrencySafe = () => true
    out.push(Object.freeze(definition))
  }
  return out
}

/** The JSON Schema of a zod 4 schema or an AI SDK schema; undefined when it is only available asynchronously. */
function toJsonSchema(schema: unknown): unknown {
  if (schema instanceof z.ZodType) return z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' })
  const json: unknown = asSchema(schema as Parameters<typeof asSchema>[0]).jsonSchema
  return typeof (json as { then?: unknown } | null)?.then === 'function' ? undefined : json
}

/** A value, a promise, or (a streaming tool) the last value of an async iterable. */
async function lastOf(result: unknown): Promise<unknown> {
  if (typeof result === 'object' && result !== null && Symbol.asyncIterator in result) {
    let last: unknown
    for await (const item of result as AsyncIterable<unknown>) last = item
    return last
  }
  return await result
}
