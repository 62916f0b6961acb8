import type { JsonSchemaNode, ObjectJsonSchema } from '@ptc/tools'
import { assertValidBindingNames, bindingKey, _quote } from '../names/binding-names.js'
import { _asRecord } from './_safe.js'
import { _annotationLines } from './annotations.js'
import { _commentLines, _jsdoc } from './jsdoc.js'
import { _renderType, type _RenderBudget } from './schema-type.js'
import { _shape } from './shape.js'

/** What the renderer reads of one bound tool: its frozen schemas. */
export interface BindingTool {
  readonly name: string
  readonly description: string
  readonly parameters: ObjectJsonSchema
  readonly output: JsonSchemaNode
}

/** Options of {@link renderDeclarations}. */
export interface RenderDeclarationsOptions {
  /**
   * Nesting levels below the root rendered exactly; nodes nested deeper render as `JsonValue`.
   * Default 16, like `InferValue`. Clamped to 0..100 000.
   */
  readonly maxDepth?: number
  /** Schema nodes rendered per tool before the rest render as `JsonValue`. Default 100 000. */
  readonly maxNodes?: number
}

/** The SDK text for a tool set and the names it binds, in the same (sorted) order. */
export interface RenderedSdk {
  readonly declarations: string
  readonly toolNames: readonly string[]
}

export const DEFAULT_MAX_DEPTH = 16
const DEFAULT_MAX_NODES = 100_000

const JSON_VALUE = 'type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue }'
const TOOL_CALL_ERROR = [
  '/** A failed tool call: `await tools.x(…)` rejects with this. `message` says why; match on `code`. */',
  'declare class ToolCallError extends Error {',
  '  constructor(toolName: string, message: string, code?: ToolErrorCode, details?: JsonValue)',
  '  readonly name: "ToolCallError"',
  '  /** The tool whose call failed. */',
  '  readonly toolName: string',
  '  /**',
  '   * Why, as a stable code: `INVALID_ARGS` (bad arguments), `DENIED` (a policy or the user refused),',
  '   * `TOOL_TIMEOUT` (the tool ran out of time), `TOOL_ERROR` (the tool failed), `ABORTED` (the call was',
  '   * cancelled), `UNKNOWN_TOOL` (no tool has that name; the message names the closest),',
  '   * `INVALID_TOOL_OUTPUT`, `ABORTED_BEFORE_DISPATCH`.',
  '   */',
  '  readonly code: ToolErrorCode',
  '  /** Structured detail of the failure, where there is some. */',
  '  readonly details?: JsonValue',
  '}',
  'type ToolErrorCode =',
  '  | "INVALID_ARGS" | "DENIED" | "TOOL_TIMEOUT" | "TOOL_ERROR" | "ABORTED"',
  '  | "UNKNOWN_TOOL" | "INVALID_TOOL_OUTPUT" | "ABORTED_BEFORE_DISPATCH" | (string & {})',
].join('\n')
const TOOLS_DOC = [
  '/**',
  ' * Every tool is an async function: `const out = await tools.name(args)`.',
  ' * Names that are not identifiers work with brackets: `await tools["some.tool"](args)`.',
  ' * A failed call rejects with a `ToolCallError` (`code`, `details`); calling a name that is not a',
  ' * tool rejects with code `UNKNOWN_TOOL` (`"name" in tools` tells whether a tool exists).',
  ' */',
].join('\n')
const CONSOLE = [
  '/** Printed lines come back to you after the run. */',
  'declare const console: {',
  ...['log', 'info', 'warn', 'error', 'debug'].map((level) => `  ${level}(...values: unknown[]): void`),
  '}',
].join('\n')

interface Entry {
  readonly name: string
  readonly description: string
  readonly parameters: unknown
  readonly output: unknown
}

/** Code-unit order (not locale order): the same names always sort the same way. */
function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}

function readEntries(tools: readonly BindingTool[]): Entry[] {
  const entries: Entry[] = []
  let list: readonly unknown[] = []
  try {
    list = Array.isArray(tools) ? [...(tools as readonly unknown[])] : []
  } catch {
    list = []
  }
  for (const tool of list) {
    // A tool may be any object (accessors and inherited fields included); schema nodes are read own-only.
    const record = _asRecord(tool)
    if (record === undefined) continue
    const read = (key: keyof BindingTool): unknown => {
      try {
        return record[key]
      } catch {
        return undefined
      }
    }
    const name = read('name')
    if (typeof name !== 'string' || name === '') continue
    const description = read('description')
    entries.push({
      name,
      description: typeof description === 'string' ? description : '',
      parameters: read('parameters'),
      output: read('output'),
    })
  }
  return entries
}

function clamp(value: number | undefined, fallback: number, max: number): number {
  return typeof value === 'number' && value >= 0 ? Math.min(Math.floor(value), max) : fallback
}

/** Whether the root renders as an object with no required property (the args may be omitted). */
function argsOptional(parameters: unknown, maxDepth: number): boolean {
  const shape = _shape(parameters, 0, maxDepth)
  return shape.kind === 'text'
    ? shape.text.startsWith('Record<')
    : shape.kind === 'object' && shape.props.every((p) => p.optional)
}

/**
 * TypeScript declarations (the SDK text a model reads) for `tools`: `JsonValue`, `ToolArgsMap`,
 * `ToolOutputMap`, `ToolName`, `ToolCallError`, `interface Tools` (one JSDoc'd method per tool;
 * an interface, so a type error names `Tools` instead of printing every signature),
 * `declare const tools: Tools` and `declare const console`. Tools are sorted by name in
 * code-unit order; properties keep their schema order; the same tool set always gives
 * byte-identical text. Open objects (`additionalProperties` absent or `true`) render as
 * `{ … } & Record<string, JsonValue>`, closed ones exactly; optional properties are `?:`. What the subset cannot say
 * degrades to `unknown`. Total and iterative: never throws, any depth. Entries without a non-empty string name are
 * skipped; of several entries with one name the first in sorted text order is kept (check names first with
 * `validateBindingNames`).
 */
export function renderDeclarations(tools: readonly BindingTool[], options: RenderDeclarationsOptions = {}): string {
  const limits = renderLimits(options)
  const rendered = readEntries(tools)
    .map((entry) => renderEntry(entry, limits))
    .sort(
      (a, b) =>
        compareNames(a.name, b.name) || compareNames(a.args + a.output + a.method, b.args + b.output + b.method),
    )
    .filter((entry, i, all) => i === 0 || all[i - 1]?.name !== entry.name)
  return (
    [
      JSON_VALUE,
      block(
        'interface ToolArgsMap',
        rendered.map((e) => e.args),
      ),
      block(
        'interface ToolOutputMap',
        rendered.map((e) => e.output),
      ),
      'type ToolName = keyof ToolArgsMap',
      TOOL_CALL_ERROR,
      `${TOOLS_DOC}\n${block(
        'interface Tools',
        rendered.map((e) => e.method),
      )}\ndeclare const tools: Tools`,
      CONSOLE,
    ].join('\n\n') + '\n'
  )
}

/**
 * The declaration of one tool as {@link renderDeclarations} renders it, as the three interface members it adds
 * (`ToolArgsMap`, `ToolOutputMap`, `Tools`): appended to the declarations of any tool set, the interfaces merge,
 * so a program may call the tool. Empty for an entry without a non-empty string name.
 */
export function renderToolDeclaration(tool: BindingTool, options: RenderDeclarationsOptions = {}): string {
  const entry = readEntries([tool])[0]
  if (entry === undefined) return ''
  const e = renderEntry(entry, renderLimits(options))
  return (
    [
      block('interface ToolArgsMap', [e.args]),
      block('interface ToolOutputMap', [e.output]),
      block('interface Tools', [e.method]),
    ].join('\n') + '\n'
  )
}

interface RenderedEntry {
  readonly name: string
  readonly args: string
  readonly output: string
  readonly method: string
}

function renderLimits(options: RenderDeclarationsOptions): { readonly maxDepth: number; readonly maxNodes: number } {
  return {
    maxDepth: clamp(options.maxDepth, DEFAULT_MAX_DEPTH, 100_000),
    maxNodes: clamp(options.maxNodes, DEFAULT_MAX_NODES, Number.MAX_SAFE_INTEGER),
  }
}

/** One tool's members; one budget per tool, so what a tool renders never depends on the other tools or their order. */
function renderEntry(entry: Entry, limits: { readonly maxDepth: number; readonly maxNodes: number }): RenderedEntry {
  const budget: _RenderBudget = { maxDepth: limits.maxDepth, nodesLeft: limits.maxNodes }
  const key = bindingKey(entry.name)
  const ref = _quote(entry.name)
  const args =
    `${_jsdoc(_annotationLines(entry.parameters), '  ')}  ${key}: ` + `${_renderType(entry.parameters, 1, budget)}`
  const output = `${_jsdoc(_annotationLines(entry.output), '  ')}  ${key}: ${_renderType(entry.output, 1, budget)}`
  const param = argsOptional(entry.parameters, budget.maxDepth) ? 'args?' : 'args'
  const method =
    `${_jsdoc(_commentLines(entry.description), '  ')}  ${key}(${param}: ToolArgsMap[${ref}]): ` +
    `Promise<ToolOutputMap[${ref}]>`
  return { name: entry.name, args, output, method }
}

function block(head: string, lines: readonly string[]): string {
  return lines.length === 0 ? `${head} {}` : `${head} {\n${lines.join('\n')}\n}`
}

/**
 * The SDK for one run: {@link renderDeclarations} plus the bound names in the same order.
 * @throws BindingNameError when the names are not bindable (empty, duplicate, `run_code`).
 */
export function renderSdk(tools: readonly BindingTool[], options: RenderDeclarationsOptions = {}): RenderedSdk {
  const names = tools.map((tool) => tool.name)
  assertValidBindingNames(names)
  return Object.freeze({
    declarations: renderDeclarations(tools, options),
    toolNames: Object.freeze([...names].sort(compareNames)),
  })
}
