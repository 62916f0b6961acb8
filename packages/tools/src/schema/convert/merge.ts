import type { JsonSchemaNode } from '../json-schema.js'
import { join, type ConvertContext, type SourceObject } from './context.js'
import { ANNOTATIONS, SILENT } from './typed.js'
import { isUnconstrained } from './union.js'

type Child = (source: unknown, path: string, refs?: readonly string[]) => JsonSchemaNode

/**
 * `$ref` and `allOf` (and the node's own keywords next to them): each part is
 * converted, then the parts are merged. A reference already being expanded on
 * this path is a cycle: that part is unconstrained, with a warning.
 */
export function convertIntersection(
  ctx: ConvertContext,
  src: SourceObject,
  path: string,
  refs: readonly string[],
  child: Child,
): JsonSchemaNode {
  const parts: JsonSchemaNode[] = []
  const ref = src['$ref']
  if (ref !== undefined) {
    if (typeof ref !== 'string') ctx.dropped(path, '$ref', 'not a string')
    else if (refs.includes(ref))
      ctx.warn(join(path, '$ref'), `recursive reference ${JSON.stringify(ref)}: this level is unconstrained`, '$ref')
    else {
      const target = ctx.resolve(ref)
      if (target === undefined)
        ctx.warn(
          join(path, '$ref'),
          `cannot resolve ${JSON.stringify(ref)} (only local references): unconstrained`,
          '$ref',
        )
      else parts.push(child(target, path, [...refs, ref]))
    }
  }
  const allOf = src['allOf']
  if (Array.isArray(allOf)) allOf.forEach((branch, i) => parts.push(child(branch, join(join(path, 'allOf'), i))))
  else if (allOf !== undefined) ctx.dropped(path, 'allOf', 'not an array of schemas')
  const rest: Record<string, unknown> = {}
  for (const key of Object.keys(src))
    if (key !== '$ref' && key !== 'allOf' && !SILENT.has(key) && !ANNOTATIONS.includes(key)) rest[key] = src[key]
  if (Object.keys(rest).length > 0) parts.push(child(rest, path))
  return mergeAll(ctx, parts, path)
}

/** The intersection of converted parts, loosened where the subset cannot express it. */
export function mergeAll(ctx: ConvertContext, parts: readonly JsonSchemaNode[], path: string): JsonSchemaNode {
  const annotations: JsonSchemaNode = {}
  const set = annotations as Record<string, unknown>
  for (const part of parts) {
    for (const [key, value] of Object.entries(part)) if (ANNOTATIONS.includes(key) && !(key in set)) set[key] = value
  }
  const constrained = parts.filter((part) => !isUnconstrained(part))
  if (constrained.length === 0) return annotations
  if (constrained.length === 1) return { ...annotations, ...(constrained[0] as JsonSchemaNode) }
  const typed = constrained.filter((part) => part.type !== undefined)
  const types = new Set(typed.map((part) => part.type))
  if (types.size > 1) {
    const numeric = [...types].every((t) => t === 'number' || t === 'integer')
    if (!numeric) ctx.impossible.add(path)
    ctx.warn(
      path,
      numeric
        ? 'allOf of number and integer: kept number'
        : `allOf of incompatible types (${[...types].join(', ')}) admits no value; this part is unconstrained`,
      'allOf',
    )
    return numeric ? { ...annotations, ...(typed.find((t) => t.type === 'number') as JsonSchemaNode) } : annotations
  }
  if (types.size === 0) {
    ctx.warn(path, 'allOf of several unions cannot be merged in the subset: unconstrained', 'allOf')
    return annotations
  }
  if (typed.length < constrained.length)
    ctx.warn(path, 'dropped the union parts of an allOf (kept the typed parts)', 'allOf')
  const first = typed[0] as JsonSchemaNode
  if (first.type !== 'object') {
    if (typed.length > 1) ctx.warn(path, `allOf of several ${String(first.type)} schemas: kept the first`, 'allOf')
    return { ...annotations, ...first }
  }
  return { ...annotations, ...mergeObjects(ctx, typed, path) }
}

function mergeObjects(ctx: ConvertContext, objects: readonly JsonSchemaNode[], path: string): JsonSchemaNode {
  const byKey = new Map<string, JsonSchemaNode[]>()
  const required: string[] = []
  for (const object of objects) {
    for (const [key, schema] of Object.entries(object.properties ?? {}))
      byKey.set(key, [...(byKey.get(key) ?? []), schema])
    for (const name of object.required ?? []) if (!required.includes(name)) required.push(name)
  }
  const properties: Record<string, JsonSchemaNode> = Object.create(null) as Record<string, JsonSchemaNode>
  for (const [key, schemas] of byKey)
    properties[key] =
      schemas.length === 1
        ? (schemas[0] as JsonSchemaNode)
        : mergeAll(ctx, schemas, join(join(path, 'properties'), key))
  const node: JsonSchemaNode = { type: 'object' }
  if (byKey.size > 0) node.properties = properties
  if (required.length > 0) node.required = required
  const closed = objects.filter((o) => o.additionalProperties === false)
  const sameKeys = objects.every((o) => Object.keys(o.properties ?? {}).length === byKey.size)
  if (closed.length === objects.length && sameKeys) node.additionalProperties = false
  else if (closed.length > 0)
    ctx.warn(path, 'additionalProperties: false inside allOf parts was relaxed', 'additionalProperties')
  return node
}

/** Whether a source node needs the intersection path. */
export function isIntersection(src: SourceObject): boolean {
  return src['$ref'] !== undefined || src['allOf'] !== undefined
}
