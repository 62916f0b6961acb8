import { ToolRegistrationError, JsonSchemaError } from '../errors.js'
import { snapshotJson } from '../json/snapshot.js'
import {
  assertObjectJsonSchema,
  assertSupportedJsonSchema,
  type JsonSchemaNode,
  type ObjectJsonSchema,
} from '../schema/json-schema.js'
import { compileJsonSchema, type CompiledValidator } from '../schema/validate.js'
import type { ToolDefinition, ToolOutputDefinition, ToolRegistrationOptions } from '../types/tool.js'
import type { Scope } from '../types/scope.js'

/** The reserved transport name: never registered, never restricted. */
export const RUN_CODE = 'run_code'

/** One live registration in one layer. */
export interface Registration {
  readonly id: number
  readonly name: string
  readonly definition: ToolDefinition
  readonly scope: Scope | undefined
  readonly when: ToolRegistrationOptions['when']
  /** Frozen lossless copy of the parameter schema, the source of `schemas()` projections. */
  readonly parameters: ObjectJsonSchema
  /** Compiled once: every successful value is checked against it. */
  readonly output: CompiledValidator
  /**
   * The definition as registered, the one executors see (host `definitions()`/`executable()`, `describe()`):
   * `parameters` and `output.schema` are the frozen copies above, so bindings, sub-call schemas and SDK
   * declarations agree with `schemas()` whatever happens to the definition's objects later.
   */
  readonly registered: ToolDefinition
  alive: boolean
}

let nextId = 0

const optionalCallbacks = [
  'isConcurrencySafe',
  'projectContent',
  'finalizeContent',
  'presentCall',
  'presentResult',
] as const

const RENDER_HINT = '(defineTool renders JSON when render is omitted)'

/** What a value is, for a message: `null`, `an array`, `a string`, … */
function kindOf(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  const type = typeof value
  return type === 'object' || type === 'undefined' ? `an ${type}` : `a ${type}`
}

/**
 * Validate a definition at the registration boundary and compile what the
 * pipeline needs. Every problem found is reported in one error.
 */
export function createRegistration(
  definition: ToolDefinition,
  options: ToolRegistrationOptions,
  scope: Scope | undefined,
  reserved = false,
): Registration {
  const problems: string[] = []
  const d = definition as Partial<Record<keyof ToolDefinition, unknown>> | null
  if (typeof d !== 'object' || d === null) throw new ToolRegistrationError('a tool definition must be an object')
  const name = d.name
  if (typeof name !== 'string' || name === '') problems.push('`name` must be a non-empty string')
  else if (name === RUN_CODE && !reserved) problems.push('`run_code` is reserved for the PTC transport')
  if (typeof d.description !== 'string') problems.push('`description` must be a string')
  if (typeof d.execute !== 'function') problems.push('`execute` must be a function')

  let parameters: ObjectJsonSchema | undefined
  try {
    assertObjectJsonSchema(d.parameters)
    const copy = snapshotJson(d.parameters)
    if (copy.ok) parameters = copy.value as unknown as ObjectJsonSchema
    else problems.push(`\`parameters\` is not lossless JSON: ${copy.message}`)
  } catch (error) {
    problems.push(`\`parameters\`: ${error instanceof JsonSchemaError ? error.message : String(error)}`)
  }

  let output: CompiledValidator | undefined
  const out: unknown = d.output
  if (out === undefined || out === null)
    problems.push(`\`output\` is ${out === null ? 'null' : 'missing'}: give { schema, render } ${RENDER_HINT}`)
  else if (typeof out !== 'object' || Array.isArray(out))
    problems.push(`\`output\` must be an object { schema, render }, not ${kindOf(out)}`)
  else {
    // Each field read once: a getter cannot change what was checked.
    const { schema, render, presentationMeta } = out as Partial<
      Record<'schema' | 'render' | 'presentationMeta', unknown>
    >
    if (schema === undefined)
      problems.push('`output.schema` is missing: give the JSON Schema of the value `execute` resolves to')
    else {
      try {
        assertSupportedJsonSchema(schema)
        output = compileJsonSchema(schema)
      } catch (error) {
        problems.push(`\`output.schema\`: ${error instanceof JsonSchemaError ? error.message : String(error)}`)
      }
    }
    if (render === undefined)
      problems.push(`\`output.render\` is missing: give (args, value) => ContentBlock[] ${RENDER_HINT}`)
    else if (typeof render !== 'function') problems.push(`\`output.render\` must be a function, not ${kindOf(render)}`)
    if (presentationMeta !== undefined && typeof presentationMeta !== 'function') {
      problems.push(`\`output.presentationMeta\` must be a function, not ${kindOf(presentationMeta)}`)
    }
  }

  const timeoutMs = d.timeoutMs
  if (timeoutMs !== undefined && (typeof timeoutMs !== 'number' || !Number.isFinite(timeoutMs) || timeoutMs <= 0)) {
    problems.push('`timeoutMs` must be a positive finite number of milliseconds')
  }
  for (const key of optionalCallbacks) {
    if (d[key] !== undefined && typeof d[key] !== 'function') problems.push(`\`${key}\` must be a function`)
  }
  const when = (options as Partial<ToolRegistrationOptions> | undefined)?.when
  if (when !== undefined && typeof when !== 'function') problems.push('`when` must be a function')

  const label = typeof name === 'string' && name !== '' ? `tool ${JSON.stringify(name)}` : 'tool'
  if (problems.length > 0 || parameters === undefined || output === undefined) {
    throw new ToolRegistrationError(`invalid ${label}: ${problems.join('; ')}`)
  }
  const registered = registeredView(definition, out as ToolOutputDefinition, parameters, output.schema)
  return { id: nextId++, name: name as string, definition, scope, when, parameters, output, registered, alive: true }
}

/**
 * A frozen view of `definition` whose model-facing declaration (`parameters`, `output.schema`) is the
 * registration's frozen copy; `checked` is the `output` object read once at registration. Everything else
 * is read from the definition through the prototype, so the view behaves as the definition does (methods,
 * `this`), and `description` stays what `schemas()` projects.
 */
function registeredView(
  definition: ToolDefinition,
  checked: ToolOutputDefinition,
  parameters: ObjectJsonSchema,
  schema: JsonSchemaNode,
): ToolDefinition {
  const output = Object.freeze(
    Object.create(checked, { schema: { value: schema, enumerable: true } }) as ToolOutputDefinition,
  )
  return Object.freeze(
    Object.create(definition, {
      parameters: { value: parameters, enumerable: true },
      output: { value: output, enumerable: true },
    }) as ToolDefinition,
  )
}
