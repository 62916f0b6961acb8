import type { JsonSchemaNode, JsonSchemaScalar } from '../json-schema.js'
import { join, type ConvertContext, type SourceObject } from './context.js'
import { ANNOTATIONS } from './typed.js'

/** Whether a converted node constrains nothing (annotations only). */
export function isUnconstrained(node: JsonSchemaNode): boolean {
  return Object.keys(node).every((key) => ANNOTATIONS.includes(key))
}

/** The scalar values a node admits, or undefined when it is not a finite set. */
function valueSet(node: JsonSchemaNode): readonly JsonSchemaScalar[] | undefined {
  if (node.const !== undefined) return [node.const]
  return node.enum
}

function disjointValues(a: JsonSchemaNode, b: JsonSchemaNode): boolean {
  const va = valueSet(a)
  const vb = valueSet(b)
  return va !== undefined && vb !== undefined && !va.some((x) => vb.some((y) => Object.is(x, y)))
}

/**
 * Whether no JSON value can match both nodes: different types (`number` and
 * `integer` overlap), disjoint scalar value sets, or objects with a shared
 * required property whose value sets are disjoint (a discriminator).
 */
export function disjoint(a: JsonSchemaNode, b: JsonSchemaNode): boolean {
  if (a.type === undefined || b.type === undefined) return false
  const numeric = (t: string): boolean => t === 'number' || t === 'integer'
  if (a.type !== b.type && !(numeric(a.type) && numeric(b.type))) return true
  if (a.type === 'object' && b.type === 'object') {
    for (const key of a.required ?? []) {
      const pa = a.properties?.[key]
      const pb = b.properties?.[key]
      if (pa !== undefined && pb !== undefined && (b.required ?? []).includes(key) && disjoint(pa, pb)) return true
    }
    return false
  }
  return disjointValues(a, b)
}

/** Inline a branch that is itself a union of pairwise-disjoint branches (equivalent under "exactly one"). */
function flatten(branches: readonly JsonSchemaNode[]): JsonSchemaNode[] {
  const out: JsonSchemaNode[] = []
  for (const branch of branches) {
    const inner = branch.oneOf
    const onlyOneOf = Object.keys(branch).every((k) => k === 'oneOf' || ANNOTATIONS.includes(k))
    if (inner !== undefined && onlyOneOf && pairwiseDisjoint(inner)) out.push(...inner)
    else out.push(branch)
  }
  return out
}

function pairwiseDisjoint(nodes: readonly JsonSchemaNode[]): boolean {
  for (let i = 0; i < nodes.length; i++)
    for (let j = i + 1; j < nodes.length; j++)
      if (!disjoint(nodes[i] as JsonSchemaNode, nodes[j] as JsonSchemaNode)) return false
  return true
}

/**
 * `anyOf`/`oneOf` of a node without `type`. Kept as `oneOf` when the converted
 * branches are pairwise disjoint (then "any" and "exactly one" agree), or when
 * it was a `oneOf` converted without loss. Otherwise unconstrained, with a warning.
 */
export function convertUnion(
  ctx: ConvertContext,
  src: SourceObject,
  path: string,
  child: (source: unknown, path: string) => JsonSchemaNode,
): JsonSchemaNode {
  const keyword = src['oneOf'] !== undefined ? 'oneOf' : 'anyOf'
  if (keyword === 'oneOf' && src['anyOf'] !== undefined) ctx.dropped(path, 'anyOf', 'anyOf next to oneOf')
  const list = src[keyword]
  if (!Array.isArray(list) || list.length === 0) {
    ctx.dropped(path, keyword, 'not a non-empty array of schemas')
    return {}
  }
  const before = ctx.warnings.length
  const converted = list.map((branch, i) => child(branch, join(join(path, keyword), i)))
  const lossy = ctx.warnings.length > before
  if (keyword === 'anyOf' && converted.some(isUnconstrained)) return {}
  if (keyword === 'oneOf' && !lossy && converted.length >= 2) return { oneOf: converted }
  const branches = flatten(converted)
  if (branches.length === 1) return branches[0] as JsonSchemaNode
  if (pairwiseDisjoint(branches)) return { oneOf: branches }
  ctx.warn(
    join(path, keyword),
    `${keyword} branches overlap after conversion (the subset has only "exactly one of"); any value is accepted ` +
      `here and the upstream server validates it`,
    keyword,
  )
  return {}
}
