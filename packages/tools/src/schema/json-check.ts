/**
 * Deep "is this lossless JSON?" check without copying, for unconstrained schema
 * nodes. Iterative; cycles are rejected, shared subtrees are checked once.
 * Unlike {@link snapshotJson} it reads plain properties (`obj[key]`): callers
 * validate values that were already materialized. Internal.
 */

/** A non-JSON finding: `at` is relative to the checked value. */
export interface _JsonFinding {
  readonly at: readonly (string | number)[]
  readonly message: string
}

/** Message for a non-container value that is not JSON, or `undefined` when it is JSON. */
export function _scalarProblem(value: unknown): string | undefined {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return undefined
    case 'number':
      if (!Number.isFinite(value)) return `${String(value)} is not a finite number`
      return value === 0 && 1 / value < 0 ? '-0 is not lossless JSON' : undefined
    case 'object':
      return undefined
    case 'undefined':
      return 'undefined is not JSON'
    case 'bigint':
      return 'a BigInt is not JSON'
    case 'symbol':
      return 'a symbol is not JSON'
    default:
      return 'a function is not JSON'
  }
}

/** Whether `value` is a plain object (prototype `Object.prototype` or `null`, not an array). */
export function _isPlainObject(value: object): boolean {
  if (Array.isArray(value)) return false
  const proto: unknown = Object.getPrototypeOf(value)
  return proto === Object.prototype || proto === null
}

interface Frame {
  readonly source: object
  readonly keys: readonly string[] | undefined
  readonly length: number
  index: number
}

/** Returns the first non-JSON finding under `root`, or `undefined`. May throw on hostile input. */
export function _findNonJson(root: unknown): _JsonFinding | undefined {
  if (typeof root !== 'object' || root === null) {
    const message = _scalarProblem(root)
    return message === undefined ? undefined : { at: [], message }
  }
  const stack: Frame[] = []
  const open = new Set<object>()
  const done = new Set<object>()
  const at = (): (string | number)[] => stack.map((f) => (f.keys === undefined ? f.index : (f.keys[f.index] as string)))
  let next: object | undefined = root
  while (true) {
    if (next !== undefined) {
      if (open.has(next)) return { at: at(), message: 'a cyclic reference is not JSON' }
      if (done.has(next)) (stack[stack.length - 1] as Frame).index++
      else {
        let frame: Frame
        if (Array.isArray(next)) frame = { source: next, keys: undefined, length: (next as unknown[]).length, index: 0 }
        else if (_isPlainObject(next)) {
          const keys = Object.keys(next)
          frame = { source: next, keys, length: keys.length, index: 0 }
        } else return { at: at(), message: 'only plain objects and arrays are JSON containers' }
        open.add(next)
        stack.push(frame)
      }
      next = undefined
    }
    const top = stack[stack.length - 1]
    if (top === undefined) return undefined
    if (top.index >= top.length) {
      stack.pop()
      open.delete(top.source)
      done.add(top.source)
      if (stack.length > 0) (stack[stack.length - 1] as Frame).index++
      continue
    }
    let child: unknown
    if (top.keys === undefined) {
      if (!Object.hasOwn(top.source, top.index)) return { at: at(), message: 'a sparse array (hole) is not JSON' }
      child = (top.source as unknown[])[top.index]
    } else {
      child = (top.source as Record<string, unknown>)[top.keys[top.index] as string]
    }
    if (typeof child === 'object' && child !== null) next = child
    else {
      const message = _scalarProblem(child)
      if (message !== undefined) return { at: at(), message }
      top.index++
    }
  }
}
