import { formatViolations, JsonSchemaError, ToolArgsError } from '../errors.js'
import { _isMaterialized } from '../json/build.js'
import { prettyJson } from '../json/pretty.js'
import { snapshotJson } from '../json/snapshot.js'
import type { JsonObject, JsonValue } from '../json/types.js'
import type { ToolCallView, ToolResultView } from '../presentation/types.js'
import type {
  ContentBlock,
  ToolDefinition,
  ToolExecution,
  ToolExecutionResult,
  ToolOutputDefinition,
  ToolResult,
  ToolRunContext,
} from '../types/index.js'
import type { ParameterSchemaSpec, ValueSchemaSpec } from './dsl.js'
import type { InferArgs, InferValue } from './infer.js'
import type { ObjectJsonSchema } from './json-schema.js'
import { parameterSchemaSpecToJsonSchema, valueSchemaSpecToJsonSchema } from './to-json-schema.js'
import { _validatorFor, compileJsonSchema, type CompiledValidator } from './validate.js'
import { isConcurrencySafeCall } from '../executor/classify.js'

/** The typed output declaration of {@link defineTool}. */
export interface TypedToolOutput<P, O> {
  // Callback positions use `NoInfer`: `P` and `O` are inferred from the specs alone,
  // never from callback bodies (which would make TypeScript expand the inference types).
  /** The canonical output value's schema; compiled to raw JSON Schema. */
  readonly schema: O
  /**
   * Pure projection from validated arguments and value to model content. Omitted: the value as
   * JSON text (`prettyJson`), one text block.
   */
  render?(args: NoInfer<InferArgs<P>>, value: NoInfer<InferValue<O>>): ContentBlock[]
  /** Pure replayable presentation projection. */
  presentationMeta?(args: NoInfer<InferArgs<P>>, value: NoInfer<InferValue<O>>): JsonValue
}

/** What {@link defineTool} takes: a `ToolDefinition` whose callbacks see inferred types. */
export interface TypedToolDefinition<P extends ParameterSchemaSpec, O extends ValueSchemaSpec> {
  readonly name: string
  readonly description: string
  /** Implicit open object root; `required: true` per required property. */
  readonly parameters: P
  readonly output: TypedToolOutput<P, O>
  /** Runs with validated, frozen arguments; must resolve to a value of `output.schema`. */
  execute(args: NoInfer<InferArgs<P>>, ctx: ToolRunContext): Promise<NoInfer<InferValue<O>>>
  /** Only an exact `true` opts in; invalid arguments are always exclusive. */
  isConcurrencySafe?(args: NoInfer<InferArgs<P>>): boolean
  readonly timeoutMs?: number
  projectContent?(exec: Readonly<ToolExecution>, result: Readonly<ToolExecutionResult>): ContentBlock[] | undefined
  finalizeContent?(exec: Readonly<ToolExecution>, result: Readonly<ToolExecutionResult>): ContentBlock[] | undefined
  /** Called only with valid arguments; invalid ones fall back to the generic presentation. */
  presentCall?(args: NoInfer<InferArgs<P>>): ToolCallView | undefined
  /** Called only with valid arguments; invalid ones keep the generic presentation. */
  presentResult?(args: NoInfer<InferArgs<P>>, result: ToolResult): ToolResultView | undefined
}

/**
 * Validates tool arguments against an object schema (raw, or compiled by
 * `compileJsonSchema`). Values that did not come from `snapshotJson` or
 * `parseJsonArguments` are snapshotted first, so what is validated is what is
 * returned. Returns the frozen arguments.
 * @throws ToolArgsError (`INVALID_ARGS`) whose message and `violations` list every bad path.
 * @throws JsonSchemaError when a raw schema is outside the enforced subset.
 */
export function validateArgs<T extends JsonObject = JsonObject>(
  schema: ObjectJsonSchema | CompiledValidator,
  args: unknown,
): T {
  const validator = _validatorFor(schema as ObjectJsonSchema)
  let value: unknown = args
  if (!_isMaterialized(args)) {
    const snapshot = snapshotJson(args)
    if (!snapshot.ok) {
      const violations = [{ path: snapshot.path, message: snapshot.message }]
      throw new ToolArgsError(`invalid arguments: ${formatViolations(violations)}`, violations)
    }
    value = snapshot.value
  }
  const violations = validator.validate(value)
  if (violations.length > 0) throw new ToolArgsError(`invalid arguments: ${formatViolations(violations)}`, violations)
  return value as T
}

/** The default `render`: the value as JSON text, one text block. */
function renderJson(_args: unknown, value: JsonValue): ContentBlock[] {
  return [{ type: 'text', text: prettyJson(value) }]
}

/**
 * Builds a raw {@link ToolDefinition} from a typed one. Parameters compile with
 * `parameterSchemaSpecToJsonSchema` and are enforced by `validateArgs` before
 * `execute` (a mismatch rejects with `ToolArgsError`); the output spec compiles
 * with `valueSchemaSpecToJsonSchema` (the pipeline enforces it on every value); without
 * `output.render` the value renders as JSON text (`prettyJson`).
 * `isConcurrencySafe`, `presentCall` and `presentResult` see only valid
 * arguments: for invalid ones they return `false` / `undefined`. `render` and
 * `presentationMeta` trust their inputs, which the pipeline validated.
 * @throws JsonSchemaError (listing every bad path) when a spec is invalid.
 */
export function defineTool<const P extends ParameterSchemaSpec, const O extends ValueSchemaSpec>(
  definition: TypedToolDefinition<P, O>,
): ToolDefinition {
  type Args = InferArgs<P>
  type Value = InferValue<O>
  const parameters = named(definition, 'parameters', () => parameterSchemaSpecToJsonSchema(definition.parameters))
  const validator = compileJsonSchema(parameters)
  /**
   * The raw output declaration: the schema compiled, `render` defaulting to the value as JSON text.
   * What is not a declaration or a function passes through as it is (a missing `output` or
   * `output.schema` stays missing), so that `register()` says exactly which field is wrong.
   */
  const rawOutput = (typed: TypedToolOutput<P, O> | null | undefined): ToolOutputDefinition => {
    if (typeof typed !== 'object' || typed === null) return typed as unknown as ToolOutputDefinition
    const { render, presentationMeta } = typed
    const output: { -readonly [K in keyof ToolOutputDefinition]?: ToolOutputDefinition[K] } = {
      render:
        render === undefined
          ? renderJson
          : typeof render !== 'function'
            ? render
            : (args, value) => render.call(typed, args as Args, value as Value),
    }
    const schema = typed.schema
    if (schema !== undefined)
      output.schema = named(definition, 'output.schema', () => valueSchemaSpecToJsonSchema(schema))
    if (typeof presentationMeta === 'function')
      output.presentationMeta = (args, value) => presentationMeta.call(typed, args as Args, value as Value) ?? null
    else if (presentationMeta !== undefined) output.presentationMeta = presentationMeta
    return Object.freeze(output) as ToolOutputDefinition
  }
  /** The validated arguments, or `undefined` when invalid. */
  const accept = (args: unknown): Args | undefined => {
    try {
      return validateArgs(validator, args) as unknown as Args
    } catch {
      return undefined
    }
  }
  const tool: ToolDefinition = {
    name: definition.name,
    description: definition.description,
    parameters,
    output: rawOutput(definition.output),
    execute: (args, ctx) => {
      // Not `async`: awaiting the deferred `InferValue<O>` would make TypeScript expand it.
      try {
        const result: Promise<unknown> = definition.execute(validateArgs(validator, args) as unknown as Args, ctx)
        return result
      } catch (thrown) {
        return Promise.reject(thrown)
      }
    },
  }
  if (definition.timeoutMs !== undefined) tool.timeoutMs = definition.timeoutMs
  if (definition.projectContent !== undefined) tool.projectContent = definition.projectContent.bind(definition)
  if (definition.finalizeContent !== undefined) tool.finalizeContent = definition.finalizeContent.bind(definition)
  // Methods are called on `definition`, so authors may use `this`.
  const typed: Omit<TypedToolDefinition<P, O>, 'parameters' | 'output'> = definition
  if (typed.isConcurrencySafe !== undefined) {
    tool.isConcurrencySafe = (args) => {
      const valid = accept(args)
      return valid !== undefined && isConcurrencySafeCall(typed, valid)
    }
  }
  if (typed.presentCall !== undefined) {
    tool.presentCall = (args) => {
      const valid = accept(args)
      return valid === undefined ? undefined : typed.presentCall?.(valid)
    }
  }
  if (typed.presentResult !== undefined) {
    tool.presentResult = (args, result) => {
      const valid = accept(args)
      return valid === undefined ? undefined : typed.presentResult?.(valid, result)
    }
  }
  return Object.freeze(tool)
}

/** Runs a spec's compilation; a `JsonSchemaError` names the tool and the field it is about. */
function named<T>(definition: { readonly name?: unknown }, field: string, compile: () => T): T {
  try {
    return compile()
  } catch (error) {
    if (!(error instanceof JsonSchemaError)) throw error
    const tool = typeof definition.name === 'string' ? ` ${JSON.stringify(definition.name)}` : ''
    throw new JsonSchemaError(error.violations, `defineTool${tool}: ${field}`)
  }
}
