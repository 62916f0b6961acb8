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
 * Roots produced by `snapshotJson`/`parseJsonArguments`/`adoptParsedJson`: fresh, frozen, lossless; with
 * the characters of JSON text their snapshot counted (undefined where none did: a parsed tree).
 */
const materialized = new WeakMap<object, number | undefined>()

/** Records a materialized root (containers only), and the characters of JSON text it was counted at, if it was. */
export function _markMaterialized<T>(value: T, chars?: number): T {
  if (typeof value === 'object' && value !== null) materialized.set(value, chars)
  return value
}

/** Whether `value` is a root this module materialized (so it needs no new snapshot). */
export function _isMaterialized(value: unknown): boolean {
  return typeof value === 'object' && value !== null && materialized.has(value)
}

/** The characters of JSON text a materialized root was counted at (a lower bound), if it was. */
export function _materializedChars(value: object): number | undefined {
  return materialized.get(value)
}
