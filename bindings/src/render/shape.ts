import { _quote } from '../names/binding-names.js'
import { _asArray, _asRecord, _at, _has, _keys, _length, _own } from './_safe.js'

/** How one schema node renders, decided without looking below its direct children. Internal. */
export type _Shape =
  | { readonly kind: 'text'; readonly text: string; readonly postfix: boolean }
  | { readonly kind: 'array'; readonly items: unknown; readonly hasItems: boolean }
  | { readonly kind: 'union'; readonly branches: readonly unknown[] }
  | { readonly kind: 'object'; readonly props: readonly _Prop[]; readonly open: boolean }

/** One declared property of an object node. Internal. */
export interface _Prop {
  readonly name: string
  readonly schema: unknown
  readonly optional: boolean
}

const ANNOTATIONS = ['description', 'title', 'default', 'examples']
const SCALAR = new Set(['type', ...ANNOTATIONS, 'enum', 'const'])
const KEYWORDS: ReadonlyMap<unknown, ReadonlySet<string>> = new Map([
  ['string', SCALAR],
  ['number', SCALAR],
  ['integer', SCALAR],
  ['boolean', SCALAR],
  ['null', SCALAR],
  ['array', new Set(['type', ...ANNOTATIONS, 'items'])],
  ['object', new Set(['type', ...ANNOTATIONS, 'properties', 'required', 'additionalProperties'])],
])
const UNTYPED = new Set([...ANNOTATIONS, 'oneOf', 'enum', 'const'])
const KEYWORD_TYPE: ReadonlyMap<unknown, string> = new Map([
  ['string', 'string'],
  ['number', 'number'],
  ['integer', 'number'],
  ['boolean', 'boolean'],
  ['null', 'null'],
])

/** `unknown`: what every node outside the enforced subset renders as. */
export const _UNKNOWN: _Shape = Object.freeze({ kind: 'text', text: 'unknown', postfix: true })
/** `JsonValue`: any JSON (no constraint, or deeper than the depth limit). */
export const _ANY_JSON: _Shape = Object.freeze({ kind: 'text', text: 'JsonValue', postfix: true })

/** A TypeScript literal type for a scalar `enum`/`const` member; `undefined` for anything else. */
function literal(value: unknown): string | undefined {
  if (value === null) return 'null'
  if (typeof value === 'boolean') return String(value)
  if (typeof value === 'string') return _quote(value)
  if (typeof value === 'number' && Number.isFinite(value)) return Object.is(value, -0) ? '0' : String(value)
  return undefined
}

function literals(values: readonly unknown[]): _Shape {
  const seen = new Set<string>()
  const texts: string[] = []
  const n = _length(values)
  for (let i = 0; i < n; i++) {
    const text = literal(_at(values, i))
    if (text === undefined) return _UNKNOWN
    if (!seen.has(text)) texts.push(text)
    seen.add(text)
  }
  if (texts.length === 0) return { kind: 'text', text: 'never', postfix: true }
  const single = texts.length === 1 && !(texts[0] ?? '').startsWith('-')
  return { kind: 'text', text: texts.join(' | '), postfix: single }
}

function objectShape(node: Record<string, unknown>): _Shape {
  const properties = _has(node, 'properties') ? _asRecord(_own(node, 'properties')) : {}
  const requiredList = _has(node, 'required') ? _asArray(_own(node, 'required')) : []
  const additional = _has(node, 'additionalProperties') ? _own(node, 'additionalProperties') : true
  if (properties === undefined || requiredList === undefined || typeof additional !== 'boolean') return _UNKNOWN
  const names = _keys(properties)
  if (names === undefined) return _UNKNOWN
  const required = new Set<unknown>()
  const n = _length(requiredList)
  for (let i = 0; i < n; i++) required.add(_at(requiredList, i))
  if (names.length === 0) {
    return { kind: 'text', text: additional ? 'Record<string, JsonValue>' : 'Record<string, never>', postfix: true }
  }
  const props = names.map((name) => ({ name, schema: _own(properties, name), optional: !required.has(name) }))
  return { kind: 'object', props, open: additional }
}

/**
 * The shape of one node of the enforced JSON-Schema subset. Total: a non-object node, an unknown
 * keyword, a keyword on the wrong type or a malformed keyword value gives `unknown`; a node
 * deeper than `maxDepth` gives `JsonValue`. Internal.
 */
export function _shape(node: unknown, depth: number, maxDepth: number): _Shape {
  if (depth > maxDepth) return _ANY_JSON
  const record = _asRecord(node)
  const keys = record === undefined ? undefined : _keys(record)
  if (record === undefined || keys === undefined) return _UNKNOWN
  const hasType = _has(record, 'type')
  const type = hasType ? _own(record, 'type') : undefined
  const allowed = hasType ? KEYWORDS.get(type) : UNTYPED
  if (allowed === undefined || !keys.every((k) => allowed.has(k))) return _UNKNOWN
  if (_has(record, 'const')) {
    const text = literal(_own(record, 'const'))
    return text === undefined ? _UNKNOWN : { kind: 'text', text, postfix: !text.startsWith('-') }
  }
  if (_has(record, 'enum')) {
    const values = _asArray(_own(record, 'enum'))
    return values === undefined ? _UNKNOWN : literals(values)
  }
  if (_has(record, 'oneOf')) {
    const branches = _asArray(_own(record, 'oneOf'))
    if (branches === undefined || _length(branches) === 0) return _UNKNOWN
    const list: unknown[] = []
    for (let i = 0; i < _length(branches); i++) list.push(_at(branches, i))
    return { kind: 'union', branches: list }
  }
  if (!hasType) return _ANY_JSON
  const keyword = KEYWORD_TYPE.get(type)
  if (keyword !== undefined) return { kind: 'text', text: keyword, postfix: true }
  if (type === 'array') return { kind: 'array', items: _own(record, 'items'), hasItems: _has(record, 'items') }
  return objectShape(record)
}
