import { describeThrown, formatViolations, JsonSchemaError, type Violation } from '../errors.js'
import { _pointerSegment } from '../json/build.js'
import {
  _compileNodes,
  type _CompiledNode,
  K_ANY,
  K_ARRAY,
  K_BOOLEAN,
  K_INTEGER,
  K_NULL,
  K_NUMBER,
  K_OBJECT,
  K_ONE_OF,
  K_STRING,
} from './compile.js'
import { _findNonJson, _isPlainObject, _scalarProblem } from './json-check.js'
import { _toSupportedJsonSchema, type JsonSchemaNode } from './json-schema.js'

/** A schema compiled once (at registration) and run on every value. */
export interface CompiledValidator {
  /** The frozen, checked copy of the schema this validator enforces. */
  readonly schema: JsonSchemaNode
  /** Every violation of `value`, path-qualified; empty when valid. Total and iterative. */
  validate(value: unknown): Violation[]
}

/** At most this many violations are reported for one value. */
const MAX_VIOLATIONS = 100
/** A oneOf branch keeps this many violations to explain a failed match. */
const MAX_BRANCH_VIOLATIONS = 10

interface PathLink {
  readonly parent: PathLink | undefined
  readonly key: string | number
}
type Key = string | number | undefined

interface Sink {
  readonly list: Violation[]
  readonly max: number
  full: boolean
}

/** Pending work: check `value` against `node`, or (with `branchSinks`) decide a oneOf. */
interface Task {
  readonly node: _CompiledNode
  readonly value: unknown
  readonly path: PathLink | undefined
  readonly sink: Sink
  readonly branchSinks: Sink[] | undefined
}

const isEnumerable = Object.prototype.propertyIsEnumerable
const validators = new WeakSet<object>()
const cache = new WeakMap<object, CompiledValidator>()

function link(parent: PathLink | undefined, key: Key): PathLink | undefined {
  return key === undefined ? parent : { parent, key }
}

function pathString(path: PathLink | undefined, extra: readonly (string | number)[] = []): string {
  const segments: string[] = []
  for (let at = path; at !== undefined; at = at.parent) segments.push(_pointerSegment(String(at.key)))
  let out = ''
  for (let i = segments.length - 1; i >= 0; i--) out += '/' + segments[i]
  for (const segment of extra) out += '/' + _pointerSegment(String(segment))
  return out
}

function report(
  sink: Sink,
  path: PathLink | undefined,
  key: Key,
  message: string,
  extra?: readonly (string | number)[],
): void {
  if (sink.full) return
  sink.list.push({ path: pathString(link(path, key), extra), message })
  if (sink.list.length >= sink.max) sink.full = true
}

function show(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)
  return String(value)
}

function describe(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'array'
  switch (typeof value) {
    case 'object':
      return _isPlainObject(value) ? 'object' : 'a non-plain object'
    case 'string':
    case 'number':
    case 'boolean':
      return `${typeof value} ${show(value)}`
    default:
      return typeof value
  }
}

/** Whether a scalar node accepts the value's type (and it is lossless). */
function typeOk(kind: number, value: unknown): boolean {
  switch (kind) {
    case K_STRING:
      return typeof value === 'string'
    case K_NUMBER:
      return typeof value === 'number' && Number.isFinite(value) && !(value === 0 && 1 / value < 0)
    case K_INTEGER:
      return Number.isInteger(value) && !(value === 0 && 1 / (value as number) < 0)
    case K_BOOLEAN:
      return typeof value === 'boolean'
    case K_NULL:
      return value === null
    case K_ARRAY:
      return Array.isArray(value)
    case K_OBJECT:
      return typeof value === 'object' && value !== null && _isPlainObject(value)
    default:
      return true
  }
}

function scalarOk(node: _CompiledNode, value: unknown): boolean {
  return typeOk(node.kind, value) && (node.allowed === undefined || node.allowed.has(value as string))
}

function anyJson(value: unknown, path: PathLink | undefined, key: Key, sink: Sink): void {
  if (typeof value !== 'object' || value === null) {
    const problem = _scalarProblem(value)
    if (problem !== undefined) report(sink, path, key, problem)
    return
  }
  const finding = _findNonJson(value)
  if (finding !== undefined) report(sink, path, key, finding.message, finding.at)
}

function mismatch(node: _CompiledNode, value: unknown, path: PathLink | undefined, key: Key, sink: Sink): void {
  const problem = typeof value === 'number' ? _scalarProblem(value) : undefined
  report(sink, path, key, problem ?? `expected ${node.label}, got ${describe(value)}`)
}

/** Reverses the tasks pushed since `base`, so children are visited in document order. */
function inOrder(stack: Task[], base: number): void {
  for (let i = base, j = stack.length - 1; i < j; i++, j--) {
    const t = stack[i] as Task
    stack[i] = stack[j] as Task
    stack[j] = t
  }
}

/** Checks one value; scalar children are checked inline, containers are pushed. */
function visit(
  node: _CompiledNode,
  value: unknown,
  path: PathLink | undefined,
  key: Key,
  sink: Sink,
  stack: Task[],
): void {
  const kind = node.kind
  if (kind === K_ANY) return anyJson(value, path, key, sink)
  if (!typeOk(kind, value)) return mismatch(node, value, path, key, sink)
  if (kind <= K_NULL) {
    if (node.allowed !== undefined && !node.allowed.has(value as string)) {
      const list = node.allowedList
      const shown = list.slice(0, 10).map(show).join(', ') + (list.length > 10 ? ', …' : '')
      report(sink, path, key, list.length === 1 ? `must be ${shown}` : `must be one of ${shown}`)
    }
    return
  }
  const here = link(path, key)
  const base = stack.length
  if (kind === K_ARRAY) {
    const array = value as unknown[]
    const items = node.items
    const length = array.length
    for (let i = 0; i < length; i++) {
      if (!Object.hasOwn(array, i)) {
        report(sink, here, i, 'a sparse array (hole) is not JSON')
        continue
      }
      const item = array[i]
      if (items === undefined) anyJson(item, here, i, sink)
      else if (items.kind <= K_NULL) visit(items, item, here, i, sink, stack)
      else stack.push({ node: items, value: item, path: { parent: here, key: i }, sink, branchSinks: undefined })
    }
    return inOrder(stack, base)
  }
  if (kind === K_OBJECT) {
    const object = value as Record<string, unknown>
    const props = node.props
    for (const name of Object.keys(object)) {
      const child = props?.get(name)
      const item = object[name]
      if (child === undefined) {
        if (node.closed) report(sink, here, name, 'is not allowed (additionalProperties: false)')
        else anyJson(item, here, name, sink)
      } else if (child.kind <= K_NULL) visit(child, item, here, name, sink, stack)
      else stack.push({ node: child, value: item, path: { parent: here, key: name }, sink, branchSinks: undefined })
    }
    for (const name of node.required) {
      if (!isEnumerable.call(object, name)) report(sink, here, name, 'is required')
    }
    return inOrder(stack, base)
  }
  // oneOf
  if (node.scalarBranches) {
    let matches = 0
    for (const branch of node.branches) if (scalarOk(branch, value)) matches++
    if (matches !== 1)
      decide(node, value, here, sink, matches === 0 ? [] : node.branches.map((b) => scalarOk(b, value)))
    return
  }
  const branchSinks = node.branches.map((): Sink => ({ list: [], max: MAX_BRANCH_VIOLATIONS, full: false }))
  stack.push({ node, value, path: here, sink, branchSinks })
  for (let i = node.branches.length - 1; i >= 0; i--) {
    stack.push({
      node: node.branches[i] as _CompiledNode,
      value,
      path: here,
      sink: branchSinks[i] as Sink,
      branchSinks: undefined,
    })
  }
}

/** Reports a oneOf that matched zero or several branches (`matched[i]` per branch). */
function decide(
  node: _CompiledNode,
  value: unknown,
  path: PathLink | undefined,
  sink: Sink,
  matched: boolean[],
  explain?: Sink[],
): void {
  const hits = matched.flatMap((ok, i) => (ok ? [i] : []))
  if (hits.length === 1) return
  if (hits.length > 1)
    return report(sink, path, undefined, `matches oneOf branches ${hits.join(', ')}; exactly one must match`)
  const candidates = node.branches.flatMap((b, i) => (b.kind === K_ONE_OF || typeOk(b.kind, value) ? [i] : []))
  const only = candidates.length === 1 ? explain?.[candidates[0] as number] : undefined
  if (only !== undefined && only.list.length > 0) {
    for (const violation of only.list) {
      if (sink.full) break
      sink.list.push({
        path: violation.path,
        message: `${violation.message} (in oneOf branch ${candidates[0] as number})`,
      })
      if (sink.list.length >= sink.max) sink.full = true
    }
    return
  }
  const expected = node.branches.map((b) => b.label).join(' | ')
  report(sink, path, undefined, `matches none of the oneOf branches (expected ${expected}), got ${describe(value)}`)
}

function run(root: _CompiledNode, value: unknown): Violation[] {
  const sink: Sink = { list: [], max: MAX_VIOLATIONS, full: false }
  const stack: Task[] = []
  let task: Task | undefined = { node: root, value, path: undefined, sink, branchSinks: undefined }
  while (task !== undefined && !sink.full) {
    try {
      if (task.branchSinks !== undefined) {
        const sinks = task.branchSinks
        decide(
          task.node,
          task.value,
          task.path,
          task.sink,
          sinks.map((s) => s.list.length === 0),
          sinks,
        )
      } else if (!task.sink.full) {
        visit(task.node, task.value, task.path, undefined, task.sink, stack)
      }
    } catch (thrown) {
      report(task.sink, task.path, undefined, `could not be read: ${describeThrown(thrown)}`)
    }
    task = stack.pop()
  }
  if (sink.full) sink.list.push({ path: '', message: `more than ${MAX_VIOLATIONS} violations; the rest are omitted` })
  return sink.list
}

/**
 * Compiles a raw schema once: checks it against the enforced subset (on a
 * frozen lossless copy, which the validator then reads) and builds iterative
 * validator data. Validation is total: hostile getters and proxies become
 * violations; 100 000-deep values do not overflow the stack.
 * @throws JsonSchemaError when the schema is outside the subset (every bad path).
 */
export function compileJsonSchema(schema: JsonSchemaNode): CompiledValidator {
  const checked = _toSupportedJsonSchema(schema)
  const root = _compileNodes(checked)
  const validate = (value: unknown): Violation[] => {
    try {
      return run(root, value)
    } catch (thrown) {
      return [{ path: '', message: `could not be validated: ${describeThrown(thrown)}` }]
    }
  }
  const validator: CompiledValidator = Object.freeze({ schema: checked, validate })
  validators.add(validator)
  cache.set(checked, validator)
  return validator
}

/** Whether `value` was returned by {@link compileJsonSchema}. Internal. */
export function _isCompiledValidator(value: unknown): value is CompiledValidator {
  return typeof value === 'object' && value !== null && validators.has(value)
}

/**
 * The cached validator of a raw schema (compiled on first use).
 * @throws JsonSchemaError when the schema is outside the subset. Internal.
 */
export function _validatorFor(schema: JsonSchemaNode): CompiledValidator {
  const key: unknown = schema
  if (_isCompiledValidator(key)) return key
  const cached = typeof key === 'object' && key !== null ? cache.get(key) : undefined
  if (cached !== undefined) return cached
  const validator = compileJsonSchema(schema)
  if (typeof key === 'object' && key !== null) cache.set(key, validator)
  return validator
}

/**
 * Validates `value` against a raw schema; the compiled form is cached per schema
 * object (treat schemas as immutable once used). Total: never throws; an
 * unsupported schema is reported as a violation at the root.
 */
export function validateJsonSchemaValue(schema: JsonSchemaNode, value: unknown): Violation[] {
  let validator: CompiledValidator
  try {
    validator = _validatorFor(schema)
  } catch (thrown) {
    const detail = thrown instanceof JsonSchemaError ? formatViolations(thrown.violations) : describeThrown(thrown)
    return [{ path: '', message: `unsupported JSON Schema: ${detail}` }]
  }
  return validator.validate(value)
}
