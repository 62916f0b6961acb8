import { describeThrown, NotJsonError } from '../errors.js'
import {
  _frozenArray,
  _frozenObject,
  _isMaterialized,
  _markMaterialized,
  _materializedChars,
  _pointer,
} from './build.js'
import { CONTAINER, type Frame, open, Reject, scalar } from './read-value.js'
import type { JsonValue } from './types.js'

/** Result of {@link snapshotJson}: a fresh deep-frozen copy, or the first non-JSON path. */
export type SnapshotJsonResult = { ok: true; value: JsonValue } | { ok: false; path: string; message: string }

/**
 * The most characters of JSON text a value may expand to (its `JSON.stringify` length, each object reached
 * twice counted twice): 256 Mi. A value past it is refused by every snapshot. An object graph that shares
 * its nodes (a DAG) is small in memory and can be exponentially large as text: a tool that returned an
 * array nesting `[a, a]` 26 times made the pipeline write 2^26 copies and ended the host process out of
 * memory. A longer text than this could not be written anyway (V8's longest string is 2^29 - 24 units).
 */
export const MAX_JSON_CHARS = 2 ** 28

/** {@link _snapshotOnce}'s result: a refusal for length names the lower bound it passed. */
export type SnapshotOnceResult = SnapshotJsonResult | { ok: false; path: string; message: string; tooLong: number }
type Refusal = Exclude<SnapshotOnceResult, { ok: true }>

function fail(stack: readonly Frame[], reject: Reject): Refusal {
  const segments: string[] = []
  for (const frame of stack)
    segments.push(frame.keys === undefined ? String(frame.index) : (frame.keys[frame.index] as string))
  segments.push(...reject.at)
  const path = _pointer(segments)
  return reject.tooLong === undefined
    ? { ok: false, path, message: reject.message }
    : { ok: false, path, message: reject.message, tooLong: reject.tooLong }
}

/** The characters of JSON text a scalar takes at least: a string's units and quotes, a number's one digit. */
function scalarChars(value: JsonValue): number {
  switch (typeof value) {
    case 'string':
      return value.length + 2
    case 'boolean':
      return value ? 4 : 5
    case 'number':
      return 1
    default:
      return 4
  }
}

const tooLong = (chars: number, maxChars: number): Reject =>
  new Reject(`its JSON text is at least ${chars} characters, more than the ${maxChars} this accepts`, [], chars)

const IN_PROGRESS: unique symbol = Symbol('in progress')

/**
 * The characters of JSON text a frozen copy takes (as `run` counts them), each container measured once
 * (`sizes`, by copy). Only a shared container (a DAG) needs it, so a tree pays nothing for it.
 */
function measured(root: object, sizes: Map<object, number>): number {
  interface Measure {
    readonly node: object
    readonly children: readonly JsonValue[]
    index: number
    total: number
  }
  const open = (node: object): Measure => {
    if (Array.isArray(node))
      return { node, children: node as JsonValue[], index: 0, total: 2 + Math.max(0, node.length - 1) }
    const record = node as Record<string, JsonValue>
    const keys = Object.keys(record)
    let total = 2 + Math.max(0, keys.length - 1)
    const children: JsonValue[] = []
    for (const key of keys) {
      total += key.length + 3
      children.push(record[key] as JsonValue)
    }
    return { node, children, index: 0, total }
  }
  const known = sizes.get(root)
  if (known !== undefined) return known
  const stack: Measure[] = [open(root)]
  while (true) {
    const top = stack[stack.length - 1] as Measure
    if (top.index < top.children.length) {
      const child = top.children[top.index++] as JsonValue
      if (typeof child !== 'object' || child === null) top.total += scalarChars(child)
      else {
        const size = sizes.get(child)
        if (size === undefined) stack.push(open(child))
        else top.total += size
      }
      continue
    }
    stack.pop()
    sizes.set(top.node, top.total)
    const parent = stack[stack.length - 1]
    if (parent === undefined) return top.total
    parent.total += top.total
  }
}

/**
 * Copies `root`, counting the characters of its JSON text as it goes (a lower bound: a number counts one
 * digit, escapes none), a container reached again counted again (its copy measured once); refused as
 * soon as the count passes `maxChars`, so a graph that shares its nodes is refused after at most
 * `maxChars` worth of references, however large its text would be.
 */
function run(root: object, maxChars: number): Refusal | { ok: true; value: JsonValue; chars: number } {
  const stack: Frame[] = []
  /**
   * Containers seen so far: their copy (DAG sharing) or IN_PROGRESS (cycle detection). Made on the second
   * container.
   */
  let seen: Map<object, JsonValue | typeof IN_PROGRESS> | undefined
  /** The measured sizes of shared copies (`measured`), made on the first reference to one. */
  let sizes: Map<object, number> | undefined
  let chars = 0
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
      if (memo !== undefined) {
        value = memo
        chars += measured(memo as object, (sizes ??= new Map()))
      } else if (_isMaterialized(source)) {
        // A parsed tree was never counted: measured once here, so a graph sharing it counts it every time.
        value = source as JsonValue
        chars += _materializedChars(source) ?? measured(source, (sizes ??= new Map()))
      } else {
        const frame = open(source)
        if (frame instanceof Reject) return fail(stack, frame)
        // Checked before the frame is pushed: the path names this container, not its first child.
        chars += frame.chars
        if (chars > maxChars) return fail(stack, tooLong(chars, maxChars))
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
      chars += scalarChars(kind)
    }
    if (value !== undefined && chars > maxChars) return fail(stack, tooLong(chars, maxChars))
    // Deliver finished values upward until some frame has a child left to read.
    while (true) {
      const top = stack[stack.length - 1]
      if (top === undefined) return { ok: true, value: value as JsonValue, chars }
      if (value !== undefined) {
        top.items[top.index++] = value
        value = undefined
      }
      if (top.index < top.items.length) {
        next = top.items[top.index]
        break
      }
      stack.pop()
      value =
        top.keys === undefined
          ? _frozenArray(top.items as JsonValue[])
          : _frozenObject(top.keys, top.items as JsonValue[])
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
 * frozen copy is shared. Iterative: depth is bounded only by memory. A value whose
 * JSON text would be longer than {@link MAX_JSON_CHARS} (a shared object counted
 * once per reference) is refused.
 */
export function snapshotJson(value: unknown): SnapshotJsonResult {
  return snapshot(value, true, MAX_JSON_CHARS)
}

/**
 * {@link snapshotJson} for a value that will not be snapshotted again (a
 * result's content, value or meta): the copy is not recorded as materialized,
 * which keeps the per-call cost of the pipeline down. A value whose JSON text
 * would be longer than `maxChars` (at most {@link MAX_JSON_CHARS}) is refused
 * with `tooLong` as soon as the copy has counted that much, before the rest is read.
 */
export function _snapshotOnce(value: unknown, maxChars = MAX_JSON_CHARS): SnapshotOnceResult {
  return snapshot(value, false, Math.min(maxChars, MAX_JSON_CHARS))
}

function snapshot(value: unknown, record: boolean, maxChars: number): SnapshotOnceResult {
  const kind = scalar(value)
  if (kind instanceof Reject) return { ok: false, path: '', message: kind.message }
  if (kind !== CONTAINER) {
    const chars = scalarChars(kind)
    return chars > maxChars ? fail([], tooLong(chars, maxChars)) : { ok: true, value: kind }
  }
  if (_isMaterialized(value)) {
    // A parsed tree (never counted) is as long as the text it came from: measured only against a caller's
    // bound (a tool returning its own arguments), not on every snapshot of a call's arguments.
    const counted = _materializedChars(value as object)
    const chars = counted ?? (maxChars < MAX_JSON_CHARS ? measured(value as object, new Map()) : 0)
    return chars > maxChars ? fail([], tooLong(chars, maxChars)) : { ok: true, value: value as JsonValue }
  }
  try {
    const result = run(value as object, maxChars)
    if (!result.ok) return result
    if (record) _markMaterialized(result.value, result.chars)
    return { ok: true, value: result.value }
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
