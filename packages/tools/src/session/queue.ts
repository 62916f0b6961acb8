import { SessionError } from '../errors.js'
import type { Session, SessionEvent } from '../types/scope.js'

/**
 * How long `drain()` waits for a session to confirm its queued events before it reports the session
 * as failed: a store that never answers (a stalled connection, a listener that never calls `next`)
 * must not hold a batch or a `run_code` call forever.
 */
export const SESSION_CONFIRM_MS = 5_000

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

  constructor(
    private readonly session: Session,
    private readonly confirmMs: number = SESSION_CONFIRM_MS,
  ) {}

  /** Queue one event (or a function building it, which may build none: `undefined`). */
  append(event: SessionEvent | (() => SessionEvent | undefined | Promise<SessionEvent | undefined>)): void {
    this.#tail = this.#tail.then(async () => {
      try {
        const built = typeof event === 'function' ? await event() : event
        if (built !== undefined) await this.session.append(built)
      } catch (error) {
        if (!this.#failed) {
          this.#failed = true
          this.#failure = error
        }
      }
    })
  }

  /**
   * Wait for every queued event; the first failure, if any (`undefined` when all were written). A
   * session that has not confirmed them within `confirmMs` is a failure too; its events are still
   * appended, in order, if it recovers.
   */
  async drain(): Promise<{ readonly error: unknown } | undefined> {
    let timer: ReturnType<typeof setTimeout> | undefined
    const stalled = await Promise.race([
      this.#tail.then(() => false),
      new Promise<true>((resolve) => (timer = setTimeout(() => resolve(true), this.confirmMs))),
    ])
    clearTimeout(timer)
    if (stalled) {
      const message =
        `the session has not confirmed its events within ${this.confirmMs} ms; not waiting for it any ` + `longer`
      return { error: this.#failed ? this.#failure : new SessionError('SESSION_WRITE_FAILED', message) }
    }
    return this.#failed ? { error: this.#failure } : undefined
  }
}
