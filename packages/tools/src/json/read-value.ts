import { describeThrown } from '../errors.js'
import type { JsonValue } from './types.js'

/** A rejection found while reading one value; `at` is relative to the value. */
export class Reject {
  constructor(
    readonly message: string,
    readonly at: readonly string[] = [],
    /** A refusal for length: the characters of JSON text counted when the bound was passed. */
    readonly tooLong?: number,
  ) {}
}

export const CONTAINER: unique symbol = Symbol('container')

/** One container being copied: its children are read up front, each exactly once, then replaced by their copies. */
export interface Frame {
  readonly source: object
  /** Object keys, or `undefined` for an array. */
  readonly keys: string[] | undefined
  readonly items: unknown[]
  index: number
  /** Its own characters of JSON text: brackets, commas, keys. */
  readonly chars: number
}

/** Classifies a non-container value; `CONTAINER` for objects and arrays. */
export function scalar(value: unknown): JsonValue | typeof CONTAINER | Reject {
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
    for (const key of keys)
      if (!isArrayIndex(key, length)) return new Reject('a named property on an array is not JSON', [key])
  }
  if (enumerableSymbol(source) !== undefined)
    return new Reject('an array with an enumerable symbol-keyed property is not JSON')
  return { source, keys: undefined, items, index: 0, chars: 2 + Math.max(0, length - 1) }
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
  // Braces, commas, and each key with its quotes and colon.
  let chars = 2 + Math.max(0, keys.length - 1)
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as string
    chars += key.length + 3
    try {
      items[i] = record[key]
    } catch (thrown) {
      return new Reject(`the property could not be read: ${describeThrown(thrown)}`, [key])
    }
  }
  return { source, keys, items, index: 0, chars }
}

/** Opens a container; every trap or getter that throws becomes a rejection. */
export function open(source: object): Frame | Reject {
  try {
    return Array.isArray(source) ? openArray(source as unknown[]) : openObject(source)
  } catch (thrown) {
    return new Reject(`the value could not be read: ${describeThrown(thrown)}`)
  }
}
