import type { Violation } from '../errors.js'
import { _pointerSegment } from '../json/build.js'
import type { JsonObject, JsonValue } from '../json/types.js'

/** Keywords of the enforced subset; anything else is rejected. */
const KEYWORDS: ReadonlySet<string> = new Set([
  'type',
  'oneOf',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'enum',
  'const',
  'description',
  'title',
  'default',
  'examples',
])

const TYPES: ReadonlySet<string> = new Set(['object', 'array', 'string', 'number', 'integer', 'boolean', 'null'])

/** Whether `value` is a JSON scalar of the given scalar type; `undefined` for non-scalar types. */
export function _scalarMatches(type: string, value: JsonValue): boolean | undefined {
  switch (type) {
    case 'string':
      return typeof value === 'string'
    case 'number':
      return typeof value === 'number'
    case 'integer':
      return Number.isInteger(value)
    case 'boolean':
      return typeof value === 'boolean'
    case 'null':
      return value === null
    default:
      return undefined
  }
}

/** Whether a (snapshotted) JSON value is a JSON object. */
export function _isJsonObject(value: JsonValue | undefined): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function own(node: JsonObject, key: string): JsonValue | undefined {
  return Object.hasOwn(node, key) ? node[key] : undefined
}

/**
 * Checks a lossless-JSON value against the enforced subset and returns every
 * violation, in document order. Iterative. Internal.
 */
export function _checkJsonSchemaTree(root: JsonValue): Violation[] {
  const violations: Violation[] = []
  const stack: Array<{ node: JsonValue; path: string }> = [{ node: root, path: '' }]
  const bad = (path: string, message: string): void => {
    violations.push({ path, message })
  }
  while (stack.length > 0) {
    const { node, path } = stack.pop() as { node: JsonValue; path: string }
    if (!_isJsonObject(node)) {
      bad(path, 'a schema node must be an object (boolean schemas are not supported)')
      continue
    }
    const children: Array<{ node: JsonValue; path: string }> = []
    for (const key of Object.keys(node)) {
      if (!KEYWORDS.has(key)) bad(`${path}/${_pointerSegment(key)}`, `unsupported keyword "${key}"`)
    }
    const rawType = own(node, 'type')
    let type: string | undefined
    if (rawType !== undefined) {
      if (typeof rawType === 'string' && TYPES.has(rawType)) type = rawType
      else if (Array.isArray(rawType))
        bad(`${path}/type`, 'type must be a single string (type arrays are not supported; use oneOf)')
      else bad(`${path}/type`, `type must be one of ${[...TYPES].join(', ')}`)
    }
    const typed = (keyword: string, wanted: string): boolean => {
      if (own(node, keyword) === undefined) return false
      if (type === wanted) return true
      if (rawType === undefined || type !== undefined)
        bad(`${path}/${keyword}`, `${keyword} is only allowed with type: '${wanted}'`)
      return false
    }
    const oneOf = own(node, 'oneOf')
    if (oneOf !== undefined) {
      if (rawType !== undefined)
        bad(`${path}/oneOf`, 'oneOf cannot be combined with type (put the type in each branch)')
      if (!Array.isArray(oneOf) || oneOf.length < 2)
        bad(`${path}/oneOf`, 'oneOf must be an array of at least two schemas')
      else oneOf.forEach((branch, i) => children.push({ node: branch, path: `${path}/oneOf/${i}` }))
    }
    const properties = own(node, 'properties')
    if (typed('properties', 'object')) {
      if (!_isJsonObject(properties)) bad(`${path}/properties`, 'properties must be an object of schemas')
      else
        for (const key of Object.keys(properties))
          children.push({ node: properties[key] as JsonValue, path: `${path}/properties/${_pointerSegment(key)}` })
    }
    if (typed('required', 'object')) {
      const required = own(node, 'required')
      if (!Array.isArray(required)) bad(`${path}/required`, 'required must be an array of property names')
      else {
        const seen = new Set<string>()
        required.forEach((name, i) => {
          if (typeof name !== 'string') bad(`${path}/required/${i}`, 'a required entry must be a string')
          else if (seen.has(name)) bad(`${path}/required/${i}`, `duplicate required entry "${name}"`)
          else if (!_isJsonObject(properties) || !Object.hasOwn(properties, name)) {
            bad(`${path}/required/${i}`, `required property "${name}" is not declared in properties`)
          }
          if (typeof name === 'string') seen.add(name)
        })
      }
    }
    if (typed('additionalProperties', 'object') && typeof own(node, 'additionalProperties') !== 'boolean') {
      bad(`${path}/additionalProperties`, 'additionalProperties must be a boolean (schemas are not supported)')
    }
    if (typed('items', 'array')) {
      const items = own(node, 'items') as JsonValue
      if (!_isJsonObject(items)) bad(`${path}/items`, 'items must be a single schema object (tuples are not supported)')
      else children.push({ node: items, path: `${path}/items` })
    }
    checkValues(node, path, type, bad)
    for (const keyword of ['description', 'title']) {
      const value = own(node, keyword)
      if (value !== undefined && typeof value !== 'string') bad(`${path}/${keyword}`, `${keyword} must be a string`)
    }
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i] as { node: JsonValue; path: string })
  }
  return violations
}

/** `enum`/`const`: only on scalar types, and type-correct. */
function checkValues(
  node: JsonObject,
  path: string,
  type: string | undefined,
  bad: (path: string, message: string) => void,
): void {
  const enumValues = own(node, 'enum')
  const constValue = own(node, 'const')
  for (const keyword of ['enum', 'const'] as const) {
    if (own(node, keyword) === undefined) continue
    if (type === undefined || _scalarMatches(type, null) === undefined) {
      bad(
        `${path}/${keyword}`,
        `${keyword} is only allowed with a scalar type (string, number, integer, boolean, null)`,
      )
    }
  }
  if (enumValues !== undefined && constValue !== undefined) bad(`${path}/const`, 'use either enum or const, not both')
  const scalarType = type !== undefined && _scalarMatches(type, null) !== undefined ? type : undefined
  if (enumValues !== undefined) {
    if (!Array.isArray(enumValues) || enumValues.length === 0) bad(`${path}/enum`, 'enum must be a non-empty array')
    else {
      enumValues.forEach((value, i) => {
        if (typeof value === 'object' && value !== null) bad(`${path}/enum/${i}`, 'enum entries must be scalars')
        else if (scalarType !== undefined && _scalarMatches(scalarType, value) !== true)
          bad(`${path}/enum/${i}`, `enum entry does not match type '${scalarType}'`)
      })
    }
  }
  if (constValue !== undefined) {
    if (typeof constValue === 'object' && constValue !== null) bad(`${path}/const`, 'const must be a scalar')
    else if (scalarType !== undefined && _scalarMatches(scalarType, constValue) !== true)
      bad(`${path}/const`, `const does not match type '${scalarType}'`)
  }
}
