import type { JsonObject, JsonValue } from './types.js'

/**
 * Internal builders of frozen JSON containers. Keys that exist on
 * `Object.prototype` (`__proto__`, or anything a polluted prototype added) are
 * defined as own data properties, so `__proto__` is an ordinary key and no
 * inherited setter can swallow a property.
 */

const objectProto: object = Object.prototype

/** Sets `key` as an own enumerable data property, never through a setter. */
export function _setOwn(target: JsonObject, key: string, value: JsonValue): void {
  if (key in objectProto) {
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true })
  } else {
    target[key] = value
  }
}

/** Builds a frozen plain object (prototype `Object.prototype`) from parallel key/value lists. */
export function _frozenObject(keys: readonly string[], values: readonly JsonValue[]): JsonObject {
  const target: JsonObject = {}
  for (let i = 0; i < keys.length; i++) _setOwn(target, keys[i] as string, values[i] as JsonValue)
  return Object.freeze(target)
}

/** Freezes `values` in place and returns it. */
export function _frozenArray(values: JsonValue[]): JsonValue[] {
  return Object.freeze(values) as JsonValue[]
}

/** Escapes one JSON-pointer segment (`~` -> `~0`, `/` -> `~1`). */
export function _pointerSegment(key: string): string {
  return key.includes('~') || key.includes('/') ? key.replace(/~/g, '~0').replace(/\//g, '~1') : key
}

/** Joins segments into a JSON-pointer-like path (`''` for the root). */
export function _pointer(segments: readonly string[]): string {
  let path = ''
  for (const segment of segments) path += '/' + _pointerSegment(segment)
  return path
}

/**
 * A base whose constructor returns the object it is given, so that a subclass's private field is put on that object.
 */
class Stamped {
  constructor(target: object) {
    return target
  }
}

/**
 * The brand of the roots produced by `snapshotJson`/`parseJsonArguments`/`adoptParsedJson`: fresh, frozen,
 * lossless; with the characters of JSON text their snapshot counted (undefined where none did: a parsed
 * tree). A private field put on the root itself, not a `WeakMap` entry: a sub-call marks one or two roots,
 * and a `WeakMap` of every live root cost each mark about 0.2 µs and the collector its ephemeron table
 * (the host pipeline's sequential sub-call 4-7% slower, a `Promise.all` of 5 000 calls 8-13%). A private
 * field is invisible to every reflection (`Reflect.ownKeys`, proxies, `structuredClone`, `JSON.stringify`)
 * and only this module can put one on or read it.
 */
class Materialized extends Stamped {
  readonly #chars: number | undefined

  constructor(target: object, chars: number | undefined) {
    super(target)
    this.#chars = chars
  }

  static has(value: object): boolean {
    return #chars in value
  }

  static chars(value: object): number | undefined {
    return (value as Materialized).#chars
  }
}

/**
 * Roots the brand could not be put on. Today's V8 puts a private field on a frozen object; the TC39
 * proposal "non-extensible applies to private" would make that throw, and then the roots are kept here.
 */
const unbranded = new WeakMap<object, number | undefined>()
let anyUnbranded = false

/** Records a materialized root (containers only), and the characters of JSON text it was counted at, if it was. */
export function _markMaterialized<T>(value: T, chars?: number): T {
  if (typeof value !== 'object' || value === null || _isMaterialized(value)) return value
  try {
    new Materialized(value, chars)
  } catch {
    unbranded.set(value, chars)
    anyUnbranded = true
  }
  return value
}

/** Whether `value` is a root this module materialized (so it needs no new snapshot). */
export function _isMaterialized(value: unknown): boolean {
  return (
    typeof value === 'object' && value !== null && (Materialized.has(value) || (anyUnbranded && unbranded.has(value)))
  )
}

/** The characters of JSON text a materialized root was counted at (a lower bound), if it was. */
export function _materializedChars(value: object): number | undefined {
  return Materialized.has(value) ? Materialized.chars(value) : unbranded.get(value)
}
