import { JsonSchemaError, type Violation } from '../errors.js'
import { _pointerSegment, _setOwn } from '../json/build.js'
import { snapshotJson } from '../json/snapshot.js'
import type { JsonObject, JsonValue } from '../json/types.js'
import { _isJsonObject, _scalarMatches } from './check.js'
import type { ParameterSchemaSpec, ValueSchemaSpec } from './dsl.js'
import { _toSupportedJsonSchema, type JsonSchemaNode, type ObjectJsonSchema } from './json-schema.js'

const PREFIX = 'invalid schema spec'
const ANNOTATIONS = ['description', 'title', 'default', 'examples'] as const
const SCALARS: ReadonlySet<string> = new Set(['string', 'number', 'integer', 'boolean', 'null'])
const TYPES: ReadonlySet<string> = new Set([...SCALARS, 'array', 'object', 'json'])
/** Keywords each spec form accepts besides annotations (and `required` on properties). */
const ALLOWED: Readonly<Record<string, readonly string[]>> = {
  scalar: ['type', 'enum', 'const'],
  array: ['type', 'items'],
  object: ['type', 'properties', 'additionalProperties'],
  json: ['type'],
  oneOf: ['oneOf'],
}
const KNOWN: ReadonlySet<string> = new Set([...Object.values(ALLOWED).flat(), ...ANNOTATIONS, 'required'])
const HOME: Readonly<Record<string, string>> = {
  enum: 'a scalar type',
  const: 'a scalar type',
  items: "type: 'array'",
  properties: "type: 'object'",
  additionalProperties: "type: 'object'",
}

interface Work {
  readonly spec: JsonValue
  readonly path: string
  readonly out: JsonObject
  readonly isProperty: boolean
}

/** Converts one spec node into `out`, queueing its children. */
function convertNode(work: Work, queue: Work[], bad: (path: string, message: string) => void): void {
  const { spec, path, out, isProperty } = work
  if (!_isJsonObject(spec)) return bad(path, 'a schema spec must be an object')
  const has = (key: string): boolean => Object.hasOwn(spec, key)
  const type = has('type') ? spec['type'] : undefined
  let form: string | undefined
  if (has('oneOf')) {
    form = 'oneOf'
    if (type !== undefined) bad(`${path}/type`, 'oneOf cannot be combined with type (put the type in each branch)')
  } else if (type === undefined)
    bad(path, "a schema spec needs a type (or oneOf); use { type: 'json' } for any JSON value")
  else if (typeof type !== 'string' || !TYPES.has(type))
    bad(`${path}/type`, `type must be one of ${[...TYPES].join(', ')}`)
  else form = SCALARS.has(type) ? 'scalar' : type
  const allowed = ALLOWED[form ?? ''] ?? []
  for (const key of Object.keys(spec)) {
    if (key === 'type' && form === 'oneOf') continue
    if (form === undefined) {
      if (!KNOWN.has(key)) bad(`${path}/${_pointerSegment(key)}`, `unsupported key "${key}"`)
      continue
    }
    if (allowed.includes(key) || (ANNOTATIONS as readonly string[]).includes(key)) continue
    if (key === 'required') {
      if (!isProperty) bad(`${path}/required`, 'required: true is only allowed on object and parameter properties')
      else if (spec[key] !== true) bad(`${path}/required`, 'required must be true (omit it for an optional property)')
    } else if (form !== undefined && HOME[key] !== undefined)
      bad(`${path}/${_pointerSegment(key)}`, `${key} is only allowed with ${HOME[key]}`)
    else bad(`${path}/${_pointerSegment(key)}`, `unsupported key "${key}"`)
  }
  for (const key of ANNOTATIONS) {
    if (!has(key)) continue
    const value = spec[key] as JsonValue
    if ((key === 'description' || key === 'title') && typeof value !== 'string')
      bad(`${path}/${key}`, `${key} must be a string`)
    else _setOwn(out, key, value)
  }
  if (form === 'scalar') convertScalar(spec, type as string, path, out, bad)
  else if (form === 'json') return
  else if (form === 'array') {
    out['type'] = 'array'
    if (has('items')) {
      const items: JsonObject = {}
      out['items'] = items
      queue.push({ spec: spec['items'] as JsonValue, path: `${path}/items`, out: items, isProperty: false })
    }
  } else if (form === 'object') convertObject(spec, path, out, queue, bad)
  else if (form === 'oneOf') {
    const branches = spec['oneOf']
    if (!Array.isArray(branches) || branches.length < 2)
      return bad(`${path}/oneOf`, 'oneOf must be an array of at least two specs')
    const outs: JsonObject[] = branches.map(() => ({}))
    out['oneOf'] = outs
    branches.forEach((branch, i) =>
      queue.push({ spec: branch, path: `${path}/oneOf/${i}`, out: outs[i] as JsonObject, isProperty: false }),
    )
  }
}

function convertScalar(
  spec: JsonObject,
  type: string,
  path: string,
  out: JsonObject,
  bad: (path: string, message: string) => void,
): void {
  out['type'] = type
  const hasEnum = Object.hasOwn(spec, 'enum')
  const hasConst = Object.hasOwn(spec, 'const')
  if (hasEnum && hasConst) bad(`${path}/const`, 'use either enum or const, not both')
  if (hasEnum) {
    const values = spec['enum']
    if (!Array.isArray(values) || values.length === 0) bad(`${path}/enum`, 'enum must be a non-empty array')
    else {
      values.forEach((value, i) => {
        if (_scalarMatches(type, value) !== true) bad(`${path}/enum/${i}`, `enum entry does not match type '${type}'`)
      })
      out['enum'] = values
    }
  }
  if (hasConst) {
    const value = spec['const'] as JsonValue
    if (_scalarMatches(type, value) !== true) bad(`${path}/const`, `const does not match type '${type}'`)
    else out['const'] = value
  }
}

function convertObject(
  spec: JsonObject,
  path: string,
  out: JsonObject,
  queue: Work[],
  bad: (path: string, message: string) => void,
): void {
  out['type'] = 'object'
  if (Object.hasOwn(spec, 'properties')) {
    const properties = spec['properties']
    if (!_isJsonObject(properties)) bad(`${path}/properties`, 'properties must be an object of specs')
    else convertProperties(properties, `${path}/properties`, out, queue)
  }
  const additional = Object.hasOwn(spec, 'additionalProperties') ? spec['additionalProperties'] : undefined
  if (typeof additional === 'boolean') out['additionalProperties'] = additional
  else if (additional === undefined)
    bad(
      `${path}/additionalProperties`,
      'every object declares additionalProperties: true (other keys allowed) or false (only these properties)',
    )
  else bad(`${path}/additionalProperties`, 'additionalProperties must be true or false')
}

/** Queues each property spec and collects the names marked `required: true`. */
function convertProperties(properties: JsonObject, path: string, out: JsonObject, queue: Work[]): void {
  const props: JsonObject = {}
  const required: string[] = []
  for (const key of Object.keys(properties)) {
    const child: JsonObject = {}
    _setOwn(props, key, child)
    const spec = properties[key] as JsonValue
    if (_isJsonObject(spec) && Object.hasOwn(spec, 'required') && spec['required'] === true) required.push(key)
    queue.push({ spec, path: `${path}/${_pointerSegment(key)}`, out: child, isProperty: true })
  }
  out['properties'] = props
  if (required.length > 0) out['required'] = required
}

/** Snapshots a spec, converts it iteratively, and re-checks the output against the raw subset. */
function compileSpec(
  spec: unknown,
  root: (json: JsonValue, queue: Work[], bad: (path: string, message: string) => void) => JsonObject,
): JsonSchemaNode {
  const snapshot = snapshotJson(spec)
  if (!snapshot.ok) throw new JsonSchemaError([{ path: snapshot.path, message: snapshot.message }], PREFIX)
  const violations: Violation[] = []
  const bad = (path: string, message: string): void => {
    violations.push({ path, message })
  }
  const queue: Work[] = []
  const out = root(snapshot.value, queue, bad)
  // A FIFO walk keeps violations in breadth-first document order; index instead of shift() for speed.
  for (let i = 0; i < queue.length; i++) convertNode(queue[i] as Work, queue, bad)
  if (violations.length > 0) throw new JsonSchemaError(violations, PREFIX)
  return _toSupportedJsonSchema(out)
}

/**
 * Compiles a value spec (output roots may be any JSON) to a frozen raw node of
 * the enforced subset. Iterative.
 * @throws JsonSchemaError listing every bad path: missing `additionalProperties`
 * on objects, `enum`/`const` not matching the type, `oneOf` with fewer than two
 * branches, misplaced `required`, unknown keys, non-JSON values…
 */
export function valueSchemaSpecToJsonSchema(spec: ValueSchemaSpec): JsonSchemaNode {
  return compileSpec(spec, (json, queue) => {
    const out: JsonObject = {}
    queue.push({ spec: json, path: '', out, isProperty: false })
    return out
  })
}

/**
 * Compiles a parameter spec (an implicit open object root) to a frozen
 * `ObjectJsonSchema`: `{ type: 'object', properties, required? }`, where
 * `required` lists the properties marked `required: true`. Iterative.
 * @throws JsonSchemaError listing every bad path (see {@link valueSchemaSpecToJsonSchema}).
 */
export function parameterSchemaSpecToJsonSchema(spec: ParameterSchemaSpec): ObjectJsonSchema {
  return compileSpec(spec, (json, queue, bad) => {
    const out: JsonObject = { type: 'object' }
    if (!_isJsonObject(json)) bad('', 'a parameter spec must be an object mapping property names to specs')
    else convertProperties(json, '', out, queue)
    return out
  }) as ObjectJsonSchema
}
