import { NotJsonError, describeThrown, SessionError } from '../errors.js'
import { snapshotJsonOrThrow } from '../json/snapshot.js'
import type { SessionEvent } from '../types/scope.js'

/**
 * A deep-frozen, lossless-JSON copy of `event` (the package's one snapshot,
 * each property read once), which must also be a session
 * event record: `type: string`, `time: number`, and `turn`/`step` numbers when
 * present. A non-JSON value is a `NotJsonError` naming the path; a bad shape a
 * `SessionError('INVALID_EVENT')`. So what is read back from a log is exactly
 * what was appended.
 */
export function snapshotEvent(event: unknown): SessionEvent {
  return checkShape(snapshotJsonOrThrow(event))
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
