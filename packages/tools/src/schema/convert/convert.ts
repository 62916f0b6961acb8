import { snapshotJson } from '../../json/snapshot.js'
import {
  assertObjectJsonSchema,
  assertSupportedJsonSchema,
  type JsonSchemaNode,
  type ObjectJsonSchema,
} from '../json-schema.js'
import {
  ConvertContext,
  isSourceObject,
  losslessCopy,
  type ConvertOptions,
  type SchemaWarning,
  type SourceObject,
} from './context.js'
import { convertIntersection, isIntersection } from './merge.js'
import { buildTyped, dropUnhandled, typesOf } from './typed.js'
import { convertUnion } from './union.js'

export type { ConvertOptions, SchemaWarning } from './context.js'

/** A converted schema and everything the conversion lost. */
export interface ConvertedSchema {
  /** A schema of the enforced subset (passes `assertSupportedJsonSchema`), frozen. */
  readonly schema: JsonSchemaNode
  readonly warnings: readonly SchemaWarning[]
}

/** A converted tool-parameter schema, or why the tool cannot be used. */
export type ConvertedObjectSchema =
  | { readonly ok: true; readonly schema: ObjectJsonSchema; readonly warnings: readonly SchemaWarning[] }
  | { readonly ok: false; readonly reason: string; readonly warnings: readonly SchemaWarning[] }

/**
 * Converts any JSON Schema (draft 4 to 2020-12, OpenAPI's `nullable`) to the
 * enforced subset, as faithfully as the subset allows, only ever loosening:
 * annotations are kept (`default`/`examples` when lossless JSON), `type: [a, b]`
 * becomes `oneOf`, local `$ref`s are inlined (a cycle becomes `{}`), `allOf` is
 * merged, `anyOf`/`oneOf` stay `oneOf` only when that cannot reject a valid
 * value, and every constraint the subset cannot express (`format`, `pattern`,
 * `minimum`, …) is dropped with a warning naming it and its path. Total: never
 * throws; depth- and size-bounded.
 */
export function convertJsonSchema(source: unknown, options: ConvertOptions = {}): ConvertedSchema {
  return _convert(source, options).result
}

function _convert(source: unknown, options: ConvertOptions): { result: ConvertedSchema; rootImpossible: boolean } {
  const ctx = new ConvertContext(source, options)
  let schema: JsonSchemaNode
  try {
    schema = convertNode(ctx, source, '', 0, [])
  } catch (error) {
    ctx.warn(
      '',
      `the schema could not be read (${error instanceof Error ? error.message : String(error)}): any value is accepted`,
    )
    schema = {}
  }
  const snapshot = snapshotJson(schema)
  try {
    if (!snapshot.ok) throw new Error(snapshot.message)
    assertSupportedJsonSchema(snapshot.value)
    return { result: { schema: snapshot.value, warnings: ctx.warnings }, rootImpossible: ctx.impossible.has('') }
  } catch (error) {
    ctx.warn(
      '',
      `internal conversion error (${error instanceof Error ? error.message : String(error)}): any value is accepted`,
    )
    return { result: { schema: Object.freeze({}), warnings: ctx.warnings }, rootImpossible: ctx.impossible.has('') }
  }
}

/**
 * {@link convertJsonSchema} for a tool's parameters: the root must become an
 * object schema. A root union of objects is loosened to an open object (with a
 * warning); a root that admits no object (e.g. `type: 'string'`) cannot be used.
 */
export function convertObjectJsonSchema(source: unknown, options: ConvertOptions = {}): ConvertedObjectSchema {
  const { result, rootImpossible } = _convert(source, options)
  const { schema, warnings } = result
  const all = [...warnings]
  if (rootImpossible)
    return {
      ok: false,
      reason: 'no arguments can satisfy the input schema (its allOf/$ref parts have incompatible types)',
      warnings: all,
    }
  let root: JsonSchemaNode = schema
  if (schema.type === undefined) {
    const branches = schema.oneOf ?? []
    if (branches.some((b) => b.type !== undefined && b.type !== 'object')) {
      return {
        ok: false,
        reason: 'the input schema admits non-object arguments (tool arguments are an object)',
        warnings: all,
      }
    }
    if (branches.length > 0)
      all.push({
        path: '/oneOf',
        keyword: 'oneOf',
        message: 'a union of object shapes at the root became one open object',
      })
    const { oneOf: _oneOf, ...annotations } = schema
    root = { ...annotations, type: 'object' }
  } else if (schema.type !== 'object') {
    return { ok: false, reason: `the input schema's root is type '${schema.type}', not an object`, warnings: all }
  }
  try {
    assertObjectJsonSchema(root)
    return { ok: true, schema: root as ObjectJsonSchema, warnings: all }
  } catch (error) {
    return {
      ok: false,
      reason: `the converted schema is not usable: ${error instanceof Error ? error.message : String(error)}`,
      warnings: all,
    }
  }
}

function convertNode(
  ctx: ConvertContext,
  source: unknown,
  path: string,
  depth: number,
  refs: readonly string[],
): JsonSchemaNode {
  if (++ctx.nodes > ctx.maxNodes) {
    ctx.warn(path, `the schema is larger than ${ctx.maxNodes} nodes: this part is unconstrained`)
    return {}
  }
  if (depth > ctx.maxDepth) {
    ctx.warn(path, `nested deeper than ${ctx.maxDepth} levels: this part is unconstrained`)
    return {}
  }
  if (source === true) return {}
  if (source === false) {
    ctx.warn(path, 'the schema `false` (no value is valid) cannot be expressed: this part is unconstrained')
    return {}
  }
  if (!isSourceObject(source)) {
    ctx.warn(path, 'not a schema object: this part is unconstrained')
    return {}
  }
  const child = (src: unknown, at: string, chain: readonly string[] = refs): JsonSchemaNode =>
    convertNode(ctx, src, at, depth + 1, chain)
  if (isIntersection(source))
    return withAnnotations(ctx, source, path, convertIntersection(ctx, source, path, refs, child))
  const types = typesOf(ctx, source, path)
  dropUnhandled(ctx, source, path, types)
  let node: JsonSchemaNode
  if (types.length === 0)
    node = source['anyOf'] !== undefined || source['oneOf'] !== undefined ? convertUnion(ctx, source, path, child) : {}
  else if (types.length === 1)
    node = buildTyped(ctx, source, types[0] as (typeof types)[number], path, child, false) ?? {}
  else {
    const branches = types.flatMap((type) => buildTyped(ctx, source, type, path, child, true) ?? [])
    node = branches.length === 0 ? {} : branches.length === 1 ? (branches[0] as JsonSchemaNode) : { oneOf: branches }
  }
  return withAnnotations(ctx, source, path, node)
}

/** The node with the source's annotations on top (string `description`/`title`, lossless `default`/`examples`). */
function withAnnotations(ctx: ConvertContext, src: SourceObject, path: string, node: JsonSchemaNode): JsonSchemaNode {
  const out: JsonSchemaNode = { ...node }
  for (const key of ['description', 'title'] as const) {
    const value = src[key]
    if (typeof value === 'string') out[key] = value
    else if (value !== undefined) ctx.dropped(path, key, 'not a string')
  }
  for (const key of ['default', 'examples'] as const) {
    if (src[key] === undefined) continue
    const value = losslessCopy(src[key])
    if (value !== undefined) out[key] = value
    else ctx.dropped(path, key, 'not lossless JSON')
  }
  return out
}
