/**
 * Total readers for untrusted schema objects: a throwing getter, a revoked proxy or an inherited
 * keyword never escapes as an exception or changes the reading. Internal.
 */

const hasOwn = Object.prototype.hasOwnProperty

/** A plain record-like object (not null, not an array), or `undefined`. */
export function _asRecord(value: unknown): Record<string, unknown> | undefined {
  try {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined
    return value as Record<string, unknown>
  } catch {
    return undefined
  }
}

/** The array itself when `value` is a real array, else `undefined`. */
export function _asArray(value: unknown): readonly unknown[] | undefined {
  try {
    return Array.isArray(value) ? (value as readonly unknown[]) : undefined
  } catch {
    return undefined
  }
}

/** Own property `key` of `record`; `undefined` when absent, inherited or unreadable. */
export function _own(record: Record<string, unknown>, key: string): unknown {
  try {
    return hasOwn.call(record, key) ? record[key] : undefined
  } catch {
    return undefined
  }
}

/** Whether `record` has the own property `key` (a throwing proxy counts as having it). */
export function _has(record: Record<string, unknown>, key: string): boolean {
  try {
    return hasOwn.call(record, key)
  } catch {
    return true
  }
}

/** Own enumerable string keys, or `undefined` when they cannot be listed. */
export function _keys(record: Record<string, unknown>): string[] | undefined {
  try {
    return Object.keys(record)
  } catch {
    return undefined
  }
}

/** Element `index` of `array`, `undefined` when unreadable. */
export function _at(array: readonly unknown[], index: number): unknown {
  try {
    return array[index]
  } catch {
    return undefined
  }
}

/** `array.length`, 0 when unreadable. */
export function _length(array: readonly unknown[]): number {
  try {
    const n = array.length
    return Number.isSafeInteger(n) && n > 0 ? n : 0
  } catch {
    return 0
  }
}
