import { _quote, bindingKey } from '../names/binding-names.js'
import { _annotationLines } from './annotations.js'
import { _jsdoc } from './jsdoc.js'
import { _ANY_JSON, _shape, _UNKNOWN, type _Shape } from './shape.js'

/** Limits of one rendering, shared by every type of a declarations file. Internal. */
export interface _RenderBudget {
  /** Nodes deeper than this render as `JsonValue`. */
  readonly maxDepth: number
  /** Nodes still allowed; once spent, further nodes render as `JsonValue`. */
  nodesLeft: number
}

type Instr =
  | string
  | { readonly node: unknown; readonly indent: number; readonly depth: number }
  | { readonly exit: object }

const OPEN_TAIL = ' & Record<string, JsonValue>'

function pad(indent: number): string {
  return '  '.repeat(indent)
}

/**
 * Whether `T[]` is valid and unambiguous for this item (else `Array<T>`). One level is enough:
 * a nested array renders as `X[]` or `Array<X>`, both safe before `[]`.
 */
function postfixSafe(shape: _Shape): boolean {
  if (shape.kind === 'text') return shape.postfix
  if (shape.kind === 'object') return !shape.open
  return shape.kind === 'array'
}

/**
 * The members of TypeScript's `Object` interface. TypeScript gives every object these members, so an object
 * without its own `toString` does not match `{ toString?: "" }` ("Type '() => string' is not assignable to
 * type '""'"): an optional property of such a name also accepts the inherited member, or a program leaving
 * it out would not type-check.
 */
const OBJECT_MEMBERS = new Set([
  'constructor',
  'toString',
  'toLocaleString',
  'valueOf',
  'hasOwnProperty',
  'isPrototypeOf',
  'propertyIsEnumerable',
])

function expand(shape: _Shape, indent: number, depth: number, budget: _RenderBudget): Instr[] {
  switch (shape.kind) {
    case 'text':
      return [shape.text]
    case 'array': {
      if (!shape.hasItems) return ['JsonValue[]']
      const item = { node: shape.items, indent, depth: depth + 1 }
      return postfixSafe(_shape(shape.items, depth + 1, budget.maxDepth)) ? [item, '[]'] : ['Array<', item, '>']
    }
    case 'union':
      return shape.branches.flatMap((node, i): Instr[] => [
        ...(i > 0 ? [' | '] : []),
        { node, indent, depth: depth + 1 },
      ])
    case 'object': {
      const inner = pad(indent + 1)
      const out: Instr[] = ['{\n']
      for (const prop of shape.props) {
        const head = `${_jsdoc(_annotationLines(prop.schema), inner)}${inner}${bindingKey(prop.name)}${prop.optional ? '?' : ''}: `
        const inherited = prop.optional && OBJECT_MEMBERS.has(prop.name) ? ` | Object[${_quote(prop.name)}]` : ''
        out.push(head, { node: prop.schema, indent: indent + 1, depth: depth + 1 }, `${inherited}\n`)
      }
      out.push(`${pad(indent)}}${shape.open ? OPEN_TAIL : ''}`)
      return out
    }
  }
}

/**
 * TypeScript type text for one schema node, with nested object members at `indent` + 1 levels.
 * Iterative (explicit stack), total, and cycle-safe: a node that is its own ancestor renders as
 * `unknown`. Internal.
 */
export function _renderType(root: unknown, indent: number, budget: _RenderBudget): string {
  const out: string[] = []
  const ancestors = new Set<object>()
  const stack: Instr[] = [{ node: root, indent, depth: 0 }]
  while (stack.length > 0) {
    const instr = stack.pop() as Instr
    if (typeof instr === 'string') {
      out.push(instr)
      continue
    }
    if ('exit' in instr) {
      ancestors.delete(instr.exit)
      continue
    }
    const { node, depth } = instr
    const isObject = typeof node === 'object' && node !== null
    let shape: _Shape
    if (isObject && ancestors.has(node)) shape = _UNKNOWN
    else if (budget.nodesLeft <= 0) shape = _ANY_JSON
    else {
      budget.nodesLeft--
      shape = _shape(node, depth, budget.maxDepth)
    }
    const parts = expand(shape, instr.indent, depth, budget)
    if (isObject && shape.kind !== 'text') {
      ancestors.add(node)
      stack.push({ exit: node })
    }
    for (let i = parts.length - 1; i >= 0; i--) stack.push(parts[i] as Instr)
  }
  return out.join('')
}
