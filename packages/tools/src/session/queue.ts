import type { Session, SessionEvent } from '../types/scope.js'

/**
 * Appends events to a session strictly in the order they are queued, without
 * making the caller wait. An event may be built asynchronously (a waterfall
 * shaping it) and is still appended in queue order. The first failure (of a
 * build or an append) is kept; later events are still attempted, so the log
 * loses as little as possible.
 */
export class SessionQueue {
  #tail: Promise<void> = Promise.resolve()
  #failed = false
  #failure: unknown = undefined

  constructor(private readonly session: Session) {}

  /** Queue one event (or a function building it). */
  append(event: SessionEvent | (() => SessionEvent | Promise<SessionEvent>)): void {
    this.#tail = this.#tail.then(async () => {
      try {
        await this.session.append(typeof event === 'function' ? await event() : event)
      } catch (error) {
        if (!this.#failed) {
          this.#failed = true
          this.#failure = error
        }
      }
    })
  }

  /** Wait for every queued event; the first failure, if any (`undefined` when all were written). */
  async drain(): Promise<{ readonly error: unknown } | undefined> {
    await this.#tail
    return this.#failed ? { error: this.#failure } : undefined
  }
}
