import { describeThrown, NotJsonError } from '../errors.js'
import { _frozenArray, _frozenObject, _isMaterialized, _markMaterialized, _pointer } from './build.js'
import type { JsonValue } from './types.js'

/** Result of {@link snapshotJson}: a fresh deep-frozen copy, or the first non-JSON path. */
export type SnapshotJsonResult = { ok: true; value: JsonValue } | { ok: false; path: string; message: string }

/** A rejection found while reading one value; `at` is relative to the value. */
class Reject {
  constructor(
    readonly message: string,
    readonly at: readonly string[] = [],
  ) {}
}

const CONTAINER: unique symbol = Symbol('container')

/** One container being copied: its children are read up front, each exactly once, then replaced by their copies. */
interface Frame {
  readonly source: object
  /** Object keys, or `undefined` for an array. */
  readonly keys: string[] | undefined
  readonly items: unknown[]
  index: number
}

/** Classifies a non-container value; `CONTAINER` for objects and arrays. */
function scalar(value: unknown): JsonValue | typeof CONTAINER | Reject {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value
    case 'number':
      if (!Number.isFinite(value)) return new Reject(`${String(value)} is not a finite number`)
      if (value === 0 && 1 / value < 0) return new Reject('-0 is not lossless JSON')
      return value
    case 'object':
      return value === null ? null : CONTAINER
    case 'undefined':
      return new Reject('undefined is not JSON')
    case 'bigint':
      return new Reject('a BigInt is not JSON')
    case 'symbol':
      return new Reject('a symbol is not JSON')
    default:
      return new Reject('a function is not JSON')
  }
}

/** Names what a non-plain object is, without running any of its code. */
function describeNonPlain(proto: object): string {
  const known: ReadonlyArray<readonly [object, string]> = [
    [Map.prototype, 'a Map'],
    [Set.prototype, 'a Set'],
    [WeakMap.prototype, 'a WeakMap'],
    [WeakSet.prototype, 'a WeakSet'],
    [Date.prototype, 'a Date'],
    [RegExp.prototype, 'a RegExp'],
    [Promise.prototype, 'a Promise'],
    [Error.prototype, 'an Error'],
    [Number.prototype, 'a boxed number'],
    [String.prototype, 'a boxed string'],
    [Boolean.prototype, 'a boxed boolean'],
    [BigInt.prototype, 'a boxed BigInt'],
    [Symbol.prototype, 'a boxed symbol'],
    [ArrayBuffer.prototype, 'an ArrayBuffer'],
  ]
  for (const [candidate, name] of known) if (proto === candidate) return `${name} is not JSON`
  return 'an object whose prototype is not Object.prototype or null (a class instance?) is not JSON'
}

function isArrayIndex(key: string, length: number): boolean {
  const n = Number(key)
  return Number.isInteger(n) && n >= 0 && n < length && String(n) === key
}

const hasOwn = Object.prototype.hasOwnProperty
const propertyIsEnumerable = Object.prototype.propertyIsEnumerable

/** A symbol-keyed own property that is enumerable, if any (JSON has no symbol keys). */
function enumerableSymbol(source: object): symbol | undefined {
  const symbols = Object.getOwnPropertySymbols(source)
  for (const symbol of symbols) if (propertyIsEnumerable.call(source, symbol)) return symbol
  return undefined
}

/**
 * Opens an array: each element is read exactly once (`[[Get]]`), holes and
 * enumerable named properties are rejected. The element list doubles as the
 * output list: each slot is overwritten by its copy.
 */
function openArray(source: unknown[]): Frame | Reject {
  const length: unknown = source.length
  if (typeof length !== 'number' || !Number.isInteger(length) || length < 0 || length > 2 ** 32 - 1) {
    return new Reject('an array with an invalid length is not JSON')
  }
  const items: unknown[] = new Array<unknown>(length)
  for (let i = 0; i < length; i++) {
    if (!hasOwn.call(source, i)) return new Reject('a sparse array (hole) is not JSON', [String(i)])
    try {
      items[i] = source[i]
    } catch (thrown) {
      return new Reject(`the element could not be read: ${describeThrown(thrown)}`, [String(i)])
    }
  }
  const keys = Object.keys(source)
  if (keys.length !== length) {
    for (const key of keys) if (!isArrayIndex(key, length)) return new Reject('a named property on an array is not JSON', [key])
  }
  if (enumerableSymbol(source) !== undefined) return new Reject('an array with an enumerable symbol-keyed property is not JSON')
  return { source, keys: undefined, items, index: 0 }
}

/** Opens a plain object: own enumerable string keys, each value read exactly once. */
function openObject(source: object): Frame | Reject {
  const proto = Reflect.getPrototypeOf(source)
  if (proto !== Object.prototype && proto !== null) return new Reject(describeNonPlain(proto))
  const keys = Object.keys(source)
  const symbol = enumerableSymbol(source)
  if (symbol !== undefined) return new Reject(`an enumerable symbol-keyed property (${String(symbol)}) is not JSON`)
  const items: unknown[] = new Array<unknown>(keys.length)
  const record = source as Record<string, unknown>
  for (let i = 0; i < keys.length; i++) {
    try {
      items[i] = record[keys[i] as string]
    } catch (thrown) {
      return new Reject(`the property could not be read: ${describeThrown(thrown)}`, [keys[i] as string])
    }
  }
  return { source, keys, items, index: 0 }
}

/** Opens a container; every trap or getter that throws becomes a rejection. */
function open(source: object): Frame | Reject {
  try {
    return Array.isArray(source) ? openArray(source as unknown[]) : openObject(source)
  } catch (thrown) {
    return new Reject(`the value could not be read: ${describeThrown(thrown)}`)
  }
}

function fail(stack: readonly Frame[], reject: Reject): SnapshotJsonResult {
  const segments: string[] = []
  for (const frame of stack) segments.push(frame.keys === undefined ? String(frame.index) : (frame.keys[frame.index] as string))
  segments.push(...reject.at)
  return { ok: false, path: _pointer(segments), message: reject.message }
}

const IN_PROGRESS: unique symbol = Symbol('in progress')

function run(root: object): SnapshotJsonResult {
  const stack: Frame[] = []
  /** Containers seen so far: their copy (DAG sharing) or IN_PROGRESS (cycle detection). Made on the second container. */
  let seen: Map<object, JsonValue | typeof IN_PROGRESS> | undefined
  let next: unknown = root
  while (true) {
    let value: JsonValue | undefined
    const kind = scalar(next)
    if (kind === CONTAINER) {
      const source = next as object
      const memo = seen?.get(source)
      if (memo === IN_PROGRESS || (seen === undefined && stack.length > 0 && stack[0]?.source === source)) {
        return fail(stack, new Reject('a cyclic reference is not JSON'))
      }
      if (memo !== undefined) value = memo
      else if (_isMaterialized(source)) value = source as JsonValue
      else {
        const frame = open(source)
        if (frame instanceof Reject) return fail(stack, frame)
        if (stack.length > 0) {
          if (seen === undefined) seen = new Map([[(stack[0] as Frame).source, IN_PROGRESS]])
          seen.set(source, IN_PROGRESS)
        }
        stack.push(frame)
      }
    } else if (kind instanceof Reject) {
      return fail(stack, kind)
    } else {
      value = kind
    }
    // Deliver finished values upward until some frame has a child left to read.
    while (true) {
      const top = stack[stack.length - 1]
      if (top === undefined) return { ok: true, value: value as JsonValue }
      if (value !== undefined) {
        top.items[top.index++] = value
        value = undefined
      }
      if (top.index < top.items.length) {
        next = top.items[top.index]
        break
      }
      stack.pop()
      value = top.keys === undefined ? _frozenArray(top.items as JsonValue[]) : _frozenObject(top.keys, top.items as JsonValue[])
      seen?.set(top.source, value)
    }
  }
}

/**
 * Materializes any value as a fresh deep-frozen lossless-JSON copy. Total: never
 * throws, even for revoked proxies or throwing getters.
 *
 * Accepts null, booleans, finite numbers other than -0, strings, dense arrays and
 * plain objects (prototype `Object.prototype` or `null`; own enumerable string
 * keys). Each property is read exactly once. Values this module already
 * materialized (deep-frozen copies) are returned as they are. `__proto__`
 * is an ordinary key. An own enumerable symbol-keyed property is rejected
 * (non-enumerable properties are ignored, as `JSON.stringify` does). Cycles are
 * rejected; an object reached twice without a cycle (a DAG) is read once and its
 * frozen copy is shared. Iterative: depth is bounded only by memory.
 */
export function snapshotJson(value: unknown): SnapshotJsonResult {
  return snapshot(value, true)
}

/**
 * {@link snapshotJson} for a value that will not be snapshotted again (a
 * result's content, value or meta): the copy is not recorded as materialized,
 * which keeps the per-call cost of the pipeline down.
 */
export function _snapshotOnce(value: unknown): SnapshotJsonResult {
  return snapshot(value, false)
}

function snapshot(value: unknown, record: boolean): SnapshotJsonResult {
  const kind = scalar(value)
  if (kind instanceof Reject) return { ok: false, path: '', message: kind.message }
  if (kind !== CONTAINER) return { ok: true, value: kind }
  if (_isMaterialized(value)) return { ok: true, value: value as JsonValue }
  try {
    const result = run(value as object)
    if (record && result.ok) _markMaterialized(result.value)
    return result
  } catch (thrown) {
    return { ok: false, path: '', message: `the value could not be read: ${describeThrown(thrown)}` }
  }
}

/**
 * Takes ownership of a value fresh from `JSON.parse` that nothing else references: freezes it in
 * place and records it as materialized, so {@link snapshotJson} returns it as it is. The shape of
 * `JSON.parse`'s result is what a snapshot would copy it into (plain objects with `Object.prototype`,
 * dense arrays, `__proto__` as an own data property, no accessors or symbols), so only the freezing
 * remains. Its numbers are not checked: `JSON.parse` turns `1e400` into `Infinity` and keeps `-0`,
 * which a snapshot refuses, so the text must come from a lossless-JSON serializer (the guest
 * prelude's snapshot is one). Anything else must go through {@link snapshotJson}: this checks nothing.
 */
export function adoptParsedJson(value: JsonValue): JsonValue {
  if (typeof value !== 'object' || value === null) return value
  const stack: object[] = [value]
  while (stack.length > 0) {
    const node = stack.pop() as object
    Object.freeze(node)
    const children: unknown[] = Array.isArray(node) ? node : Object.values(node)
    for (let i = 0; i < children.length; i++) {
      const child = children[i]
      if (typeof child === 'object' && child !== null) stack.push(child)
    }
  }
  return _markMaterialized(value)
}

/** {@link snapshotJson}, throwing {@link NotJsonError} with the offending path. */
export function snapshotJsonOrThrow(value: unknown): JsonValue {
  const result = snapshotJson(value)
  if (!result.ok) throw new NotJsonError(result.path, result.message)
  return result.value
}
