import type { JsonSchemaNode, JsonSchemaScalar, JsonSchemaType } from '../json-schema.js'
import { isSourceObject, join, type ConvertContext, type SourceObject } from './context.js'

/** Converts one child schema (the recursion of `convert.ts`). */
export type ConvertChild = (source: unknown, path: string) => JsonSchemaNode

const TYPES: ReadonlySet<string> = new Set(['object', 'array', 'string', 'number', 'integer', 'boolean', 'null'])

/** Annotations the subset keeps. */
export const ANNOTATIONS: readonly string[] = ['description', 'title', 'default', 'examples']
/** Structural keywords removed without a warning: they constrain nothing by themselves. */
export const SILENT: ReadonlySet<string> = new Set([
  '$schema',
  '$id',
  '$comment',
  '$defs',
  'definitions',
  '$anchor',
  '$dynamicAnchor',
  'nullable',
])
/** Keywords handled by the converter itself. */
const HANDLED: ReadonlySet<string> = new Set([
  'type',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'enum',
  'const',
  '$ref',
  'allOf',
  'anyOf',
  'oneOf',
  ...ANNOTATIONS,
])
/** Constraints the subset cannot express, by the type they apply to. */
const CONSTRAINTS: Readonly<Record<string, string>> = {
  patternProperties: 'object',
  propertyNames: 'object',
  minProperties: 'object',
  maxProperties: 'object',
  dependentRequired: 'object',
  dependentSchemas: 'object',
  dependencies: 'object',
  unevaluatedProperties: 'object',
  prefixItems: 'array',
  additionalItems: 'array',
  contains: 'array',
  minContains: 'array',
  maxContains: 'array',
  minItems: 'array',
  maxItems: 'array',
  uniqueItems: 'array',
  unevaluatedItems: 'array',
  minLength: 'string',
  maxLength: 'string',
  pattern: 'string',
  format: 'string',
  contentEncoding: 'string',
  contentMediaType: 'string',
  contentSchema: 'string',
  minimum: 'number',
  maximum: 'number',
  exclusiveMinimum: 'number',
  exclusiveMaximum: 'number',
  multipleOf: 'number',
}
const OWNED_BY: Readonly<Record<string, string>> = {
  properties: 'object',
  required: 'object',
  additionalProperties: 'object',
  items: 'array',
}

/** Whether a scalar value is an instance of a scalar type. */
export function scalarMatches(type: JsonSchemaType, value: JsonSchemaScalar): boolean {
  if (type === 'integer') return Number.isInteger(value)
  if (type === 'null') return value === null
  return typeof value === type
}

function isScalar(value: unknown): value is JsonSchemaScalar {
  return (
    value === null ||
    typeof value === 'string' ||
    typeof value === 'boolean' ||
    (typeof value === 'number' && Number.isFinite(value) && !Object.is(value, -0))
  )
}

function scalarType(value: JsonSchemaScalar): JsonSchemaType {
  return value === null ? 'null' : (typeof value as 'string' | 'number' | 'boolean')
}

/**
 * The types a node admits: `type` (a string or an array), OpenAPI's `nullable`,
 * or, when there is no `type`, inferred from `enum`/`const` values or from
 * object/array keywords. `number` absorbs `integer` (they overlap).
 */
export function typesOf(ctx: ConvertContext, src: SourceObject, path: string): JsonSchemaType[] {
  const raw = src['type']
  let types: string[] = []
  if (typeof raw === 'string') types = [raw]
  else if (Array.isArray(raw)) types = raw.filter((t): t is string => typeof t === 'string')
  else if (raw !== undefined) ctx.warn(join(path, 'type'), 'type is neither a string nor an array; ignored', 'type')
  for (const t of types)
    if (!TYPES.has(t)) ctx.warn(join(path, 'type'), `unknown type ${JSON.stringify(t)} ignored`, 'type')
  types = [...new Set(types.filter((t) => TYPES.has(t)))]
  if (raw === undefined) {
    const values = src['enum'] !== undefined ? src['enum'] : src['const'] !== undefined ? [src['const']] : undefined
    if (Array.isArray(values)) types = [...new Set(values.filter(isScalar).map(scalarType))]
    else if (['properties', 'required', 'additionalProperties'].some((k) => src[k] !== undefined)) {
      types = ['object']
      ctx.warn(path, "no type: inferred type 'object' from the object keywords", 'type')
    } else if (src['items'] !== undefined) {
      types = ['array']
      ctx.warn(path, "no type: inferred type 'array' from items", 'type')
    }
  }
  if (src['nullable'] === true && types.length > 0 && !types.includes('null')) types.push('null')
  if (types.includes('number')) types = types.filter((t) => t !== 'integer')
  return types as JsonSchemaType[]
}

/**
 * Warn about every keyword of `src` the converter drops (constraints that apply to one of `types`, unknown keywords).
 */
export function dropUnhandled(
  ctx: ConvertContext,
  src: SourceObject,
  path: string,
  types: readonly JsonSchemaType[],
): void {
  const admits = (type: string): boolean =>
    types.length === 0 || types.includes(type as JsonSchemaType) || (type === 'number' && types.includes('integer'))
  for (const key of Object.keys(src)) {
    if (SILENT.has(key)) continue
    const owner = CONSTRAINTS[key] ?? OWNED_BY[key]
    if (owner !== undefined) {
      // A keyword for a type the node does not admit constrains nothing: dropping it is exact.
      if (CONSTRAINTS[key] !== undefined && admits(owner)) ctx.dropped(path, key)
      continue
    }
    if (key === 'anyOf' || key === 'oneOf') {
      if (types.length > 0) ctx.dropped(path, key, 'cannot be combined with type in the enforced subset')
      continue
    }
    if (!HANDLED.has(key))
      ctx.dropped(path, key, key.startsWith('x-') ? 'vendor extension' : 'keyword outside the enforced subset')
  }
}

/**
 * The node for one type of `src`. With several types (`multi`), a scalar branch
 * whose `enum`/`const` admits no value of its type is impossible: undefined.
 */
export function buildTyped(
  ctx: ConvertContext,
  src: SourceObject,
  type: JsonSchemaType,
  path: string,
  child: ConvertChild,
  multi: boolean,
): JsonSchemaNode | undefined {
  if (type === 'object') return buildObject(ctx, src, path, child)
  if (type === 'array') {
    const node: JsonSchemaNode = { type: 'array' }
    const items = src['items']
    if (Array.isArray(items)) ctx.dropped(path, 'items', 'tuple items are not supported; items are unconstrained')
    else if (items !== undefined) node.items = child(items, join(path, 'items'))
    if (src['enum'] !== undefined || src['const'] !== undefined)
      ctx.warn(path, 'dropped enum/const of an array (only scalar values are supported)', 'enum')
    return node
  }
  const node: JsonSchemaNode = { type }
  for (const keyword of ['enum', 'const'] as const) {
    const raw = src[keyword]
    if (raw === undefined) continue
    const values = keyword === 'const' ? [raw] : Array.isArray(raw) ? raw : undefined
    if (values === undefined) {
      ctx.dropped(path, keyword, 'not an array')
      continue
    }
    if (values.some((v) => !isScalar(v))) ctx.warn(join(path, keyword), `dropped non-scalar ${keyword} values`, keyword)
    const kept = [...new Set(values.filter(isScalar).filter((v) => scalarMatches(type, v)))]
    if (kept.length === 0) {
      if (multi) return undefined
      ctx.warn(join(path, keyword), `no ${keyword} value is a ${type}; ${keyword} dropped`, keyword)
    } else if (keyword === 'const' && node.enum === undefined) node.const = kept[0] as JsonSchemaScalar
    else if (keyword === 'enum') node.enum = kept
  }
  if (node.enum !== undefined && node.const !== undefined) delete node.enum
  return node
}

function buildObject(ctx: ConvertContext, src: SourceObject, path: string, child: ConvertChild): JsonSchemaNode {
  const node: JsonSchemaNode = { type: 'object' }
  const properties: Record<string, JsonSchemaNode> = Object.create(null) as Record<string, JsonSchemaNode>
  const rawProperties = src['properties']
  if (isSourceObject(rawProperties)) {
    for (const key of Object.keys(rawProperties))
      properties[key] = child(rawProperties[key], join(join(path, 'properties'), key))
  } else if (rawProperties !== undefined) ctx.dropped(path, 'properties', 'not an object of schemas')
  const rawRequired = src['required']
  const required: string[] = []
  if (Array.isArray(rawRequired)) {
    for (const name of rawRequired) {
      if (typeof name !== 'string' || required.includes(name)) continue
      required.push(name)
      if (!Object.hasOwn(properties, name)) properties[name] = {}
    }
    if (required.length < rawRequired.length)
      ctx.warn(join(path, 'required'), 'dropped duplicate or non-string required entries', 'required')
  } else if (rawRequired !== undefined) ctx.dropped(path, 'required', 'not an array of names')
  if (isSourceObject(rawProperties) || Object.keys(properties).length > 0) node.properties = properties
  if (required.length > 0) node.required = required
  const additional = src['additionalProperties']
  if (typeof additional === 'boolean') node.additionalProperties = additional
  else if (additional !== undefined) {
    node.additionalProperties = true
    if (!(isSourceObject(additional) && Object.keys(additional).length === 0)) {
      ctx.warn(
        join(path, 'additionalProperties'),
        'an additionalProperties schema became true (extra properties are not checked here)',
        'additionalProperties',
      )
    }
  }
  if (src['enum'] !== undefined || src['const'] !== undefined)
    ctx.warn(path, 'dropped enum/const of an object (only scalar values are supported)', 'enum')
  return node
}
