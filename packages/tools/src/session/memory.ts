import type { Session, SessionEvent } from '../types/scope.js'
import { snapshotEvent } from './event.js'

/**
 * An ordered, in-memory `Session` (tests, short-lived agents).
 *
 * `append` stores a deep-frozen JSON snapshot of the event (see `snapshotEvent`),
 * so mutating the object afterwards cannot change history, and what is stored
 * is exactly what a `JsonlSession` would write. A non-JSON event (or one
 * without `type: string` / `time: number`) rejects and nothing is stored.
 */
export class MemorySession implements Session {
  readonly #events: SessionEvent[] = []
  #view: readonly SessionEvent[] | undefined

  /** Stores a snapshot of `event`; rejects with `NotJsonError` / `SessionError('INVALID_EVENT')`. */
  append(event: SessionEvent): Promise<void> {
    try {
      this.#events.push(snapshotEvent(event))
      this.#view = undefined
      return Promise.resolve()
    } catch (error) {
      return Promise.reject(error)
    }
  }

  /** Every stored event in append order: a frozen array of deep-frozen events. */
  get events(): readonly SessionEvent[] {
    this.#view ??= Object.freeze(this.#events.slice())
    return this.#view
  }

  /** The stored events whose `type` is `type`, in append order. */
  ofType(type: string): readonly SessionEvent[] {
    return Object.freeze(this.#events.filter((event) => event.type === type))
  }
}
