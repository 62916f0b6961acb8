import type { JsonSchemaNode, JsonSchemaScalar } from './json-schema.js'

/** Node kinds of a compiled schema; scalar kinds are `<= K_NULL`. Internal. */
export const K_ANY = 0
export const K_STRING = 1
export const K_NUMBER = 2
export const K_INTEGER = 3
export const K_BOOLEAN = 4
export const K_NULL = 5
export const K_ARRAY = 6
export const K_OBJECT = 7
export const K_ONE_OF = 8

const KIND_OF_TYPE: Readonly<Record<string, number>> = {
  string: K_STRING,
  number: K_NUMBER,
  integer: K_INTEGER,
  boolean: K_BOOLEAN,
  null: K_NULL,
  array: K_ARRAY,
  object: K_OBJECT,
}

/** One compiled schema node: plain data read by the iterative validator. Internal. */
export interface _CompiledNode {
  kind: number
  /** What the node expects, for messages (`string`, `object`, `any JSON`, …). */
  label: string
  /** Allowed scalars (`enum`, or `const` as one value). */
  allowed: ReadonlySet<JsonSchemaScalar> | undefined
  /** The declared scalars, for messages. */
  allowedList: readonly JsonSchemaScalar[]
  props: Map<string, _CompiledNode> | undefined
  required: readonly string[]
  closed: boolean
  /** Item schema; `undefined` accepts any JSON item. */
  items: _CompiledNode | undefined
  branches: _CompiledNode[]
  /** All branches are scalar nodes: oneOf can be decided inline. */
  scalarBranches: boolean
}

function emptyNode(): _CompiledNode {
  return {
    kind: K_ANY,
    label: 'any JSON value',
    allowed: undefined,
    allowedList: [],
    props: undefined,
    required: [],
    closed: false,
    items: undefined,
    branches: [],
    scalarBranches: false,
  }
}

/**
 * Compiles a checked (supported, frozen) schema into validator data, once.
 * Iterative: the schema may be arbitrarily deep. Internal.
 */
export function _compileNodes(schema: JsonSchemaNode): _CompiledNode {
  const root = emptyNode()
  const stack: Array<[JsonSchemaNode, _CompiledNode]> = [[schema, root]]
  const fills: _CompiledNode[] = []
  while (stack.length > 0) {
    const [source, target] = stack.pop() as [JsonSchemaNode, _CompiledNode]
    if (source.type !== undefined) {
      target.kind = KIND_OF_TYPE[source.type] ?? K_ANY
      target.label = source.type
    }
    const list = source.enum ?? (Object.hasOwn(source, 'const') ? [source.const as JsonSchemaScalar] : undefined)
    if (list !== undefined) {
      target.allowed = new Set(list)
      target.allowedList = list
      if (list.length <= 5) target.label = list.map((v) => JSON.stringify(v)).join(' | ')
    }
    if (source.properties !== undefined) {
      const props = new Map<string, _CompiledNode>()
      for (const key of Object.keys(source.properties)) {
        const child = emptyNode()
        props.set(key, child)
        stack.push([source.properties[key] as JsonSchemaNode, child])
      }
      target.props = props
    }
    target.required = source.required ?? []
    target.closed = source.additionalProperties === false
    if (source.items !== undefined) {
      target.items = emptyNode()
      stack.push([source.items, target.items])
    }
    if (source.oneOf !== undefined) {
      target.kind = K_ONE_OF
      target.label = 'oneOf'
      for (const branch of source.oneOf) {
        const child = emptyNode()
        target.branches.push(child)
        stack.push([branch, child])
      }
      fills.push(target)
    }
  }
  // Children are compiled once the loop ends; only now are branch kinds known.
  for (const node of fills) node.scalarBranches = node.branches.every((b) => b.kind !== K_ANY && b.kind <= K_NULL)
  return root
}
