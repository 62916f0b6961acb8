import { NotJsonError, describeThrown } from '../errors.js'
import type { SessionEvent } from '../types/scope.js'
import { SessionError } from '../errors.js'

type Container = unknown[] | Record<string, unknown>
type Task =
  | { readonly kind: 'visit'; readonly value: unknown; readonly path: string; readonly set: (copy: unknown) => void }
  | { readonly kind: 'leave'; readonly value: object }

/**
 * A deep-frozen, plain-JSON copy of `event`, total: it never lets a foreign
 * exception escape. Accepted: `null`, booleans, finite numbers other than `-0`,
 * strings, dense arrays and plain objects (prototype `Object.prototype` or
 * `null`); every property is read exactly once, symbol keys and non-enumerable
 * properties are not data and are skipped. Anything else (`undefined`, BigInt,
 * symbols, functions, cycles, sparse arrays, NaN, ±Infinity, `-0`, Date, Map,
 * class instances, throwing getters or proxy traps) is a `NotJsonError` naming
 * the path. The root must also carry `type: string` and `time: number`
 * (`turn`/`step`, when present, numbers), else a `SessionError('INVALID_EVENT')`.
 * So what is read back from a log is exactly what was appended.
 */
export function snapshotEvent(event: unknown): SessionEvent {
  let root: unknown
  const containers: Container[] = []
  const active = new Set<object>()
  const stack: Task[] = [{ kind: 'visit', value: event, path: '', set: (copy) => (root = copy) }]
  let path = ''
  try {
    while (stack.length > 0) {
      const task = stack.pop() as Task
      if (task.kind === 'leave') {
        active.delete(task.value)
        continue
      }
      path = task.path
      const value = task.value
      if (value === null || typeof value === 'boolean' || typeof value === 'string') {
        task.set(value)
      } else if (typeof value === 'number') {
        if (!Number.isFinite(value)) throw new NotJsonError(path, `${value} is not a JSON number`)
        if (Object.is(value, -0)) throw new NotJsonError(path, '-0 is not a JSON number')
        task.set(value)
      } else if (typeof value !== 'object') {
        throw new NotJsonError(path, `${typeof value} is not JSON`)
      } else {
        if (active.has(value)) throw new NotJsonError(path, 'cycle: the value contains itself')
        const entries = readEntries(value, path)
        const copy: Container = Array.isArray(value) ? [] : {}
        containers.push(copy)
        task.set(copy)
        active.add(value)
        stack.push({ kind: 'leave', value })
        for (let i = entries.length - 1; i >= 0; i--) {
          const [key, child] = entries[i] as [string, unknown]
          stack.push({ kind: 'visit', value: child, path: `${path}/${escapeKey(key)}`, set: (c) => setOwn(copy, key, c) })
        }
      }
    }
  } catch (error) {
    if (error instanceof NotJsonError) throw error
    throw new NotJsonError(path, `cannot be read: ${describeThrown(error)}`)
  }
  for (const container of containers) Object.freeze(container)
  return checkShape(root)
}

/**
 * `snapshotEvent(event)` plus its JSON Lines encoding: one line of UTF-8 ending
 * in `\n` (JSON escapes every newline inside strings, so the line is whole).
 */
export function encodeEvent(event: unknown): { readonly event: SessionEvent; readonly line: Buffer } {
  const snapshot = snapshotEvent(event)
  let text: string
  try {
    text = JSON.stringify(snapshot)
  } catch (error) {
    throw new NotJsonError('', `cannot be serialized: ${describeThrown(error)}`)
  }
  return { event: snapshot, line: Buffer.from(`${text}\n`, 'utf8') }
}

/** Own enumerable string-keyed entries, each property read once; arrays must be dense. */
function readEntries(value: object, path: string): Array<[string, unknown]> {
  if (Array.isArray(value)) {
    const items: unknown[] = value
    const entries: Array<[string, unknown]> = []
    for (let i = 0; i < items.length; i++) {
      if (!(i in items)) throw new NotJsonError(`${path}/${i}`, 'sparse arrays are not JSON')
      entries.push([String(i), items[i]])
    }
    return entries
  }
  const proto: unknown = Object.getPrototypeOf(value)
  if (proto !== Object.prototype && proto !== null) {
    const name = describeConstructor(value)
    throw new NotJsonError(path, `${name} is not a plain object`)
  }
  const record = value as Record<string, unknown>
  return Object.keys(record).map((key) => [key, record[key]])
}

function setOwn(container: Container, key: string, value: unknown): void {
  if (Array.isArray(container)) container.push(value)
  else if (key === '__proto__') Object.defineProperty(container, key, { value, enumerable: true, writable: true, configurable: true })
  else container[key] = value
}

function checkShape(root: unknown): SessionEvent {
  const problem = eventShapeProblem(root)
  if (problem !== undefined) throw new SessionError('INVALID_EVENT', problem)
  return root as SessionEvent
}

/** Why `value` is not a `SessionEvent` record, or `undefined` when it is one. */
export function eventShapeProblem(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return 'a session event must be an object with `type` and `time`'
  }
  const record = value as Record<string, unknown>
  if (typeof record.type !== 'string') return 'a session event needs `type: string`'
  if (typeof record.time !== 'number') return 'a session event needs `time: number`'
  for (const key of ['turn', 'step'] as const) {
    if (Object.hasOwn(record, key) && typeof record[key] !== 'number') {
      return `a session event's \`${key}\` must be a number when present`
    }
  }
  return undefined
}

function escapeKey(key: string): string {
  return key.replaceAll('~', '~0').replaceAll('/', '~1')
}

function describeConstructor(value: object): string {
  try {
    const ctor: unknown = (value as { constructor?: unknown }).constructor
    return typeof ctor === 'function' && ctor.name !== '' ? `a ${ctor.name}` : 'an object with a custom prototype'
  } catch {
    return 'an object with a custom prototype'
  }
}
