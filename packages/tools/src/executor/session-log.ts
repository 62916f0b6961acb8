import type { ToolCallBlock } from '../types/content.js'
import type { ToolExecutionResult } from '../types/execution.js'
import type { Session, SessionEvent } from '../types/scope.js'

/**
 * Appends a batch's `tool/call` and `tool/result` events to the agent's
 * session, strictly in the order they are given, without delaying dispatch.
 * The first append failure is kept and reported by `drain()`; later events are
 * still attempted so that the log loses as little as possible.
 */
export class SessionLog {
  #tail: Promise<void> = Promise.resolve()
  #failure: unknown = undefined
  #failed = false

  constructor(
    private readonly session: Session,
    private readonly step: { readonly turn: number; readonly step: number },
  ) {}

  call(call: ToolCallBlock): void {
    this.#append({ type: 'tool/call', time: Date.now(), ...this.step, callId: call.id, name: call.name, arguments: call.arguments })
  }

  /** The durable projection: content, error and meta; never the execution-local value. */
  result(call: ToolCallBlock, result: ToolExecutionResult): void {
    this.#append({
      type: 'tool/result',
      time: Date.now(),
      ...this.step,
      callId: call.id,
      name: call.name,
      isError: result.isError,
      content: result.content,
      ...(result.error !== undefined && { error: result.error }),
      ...(result.meta !== undefined && { meta: result.meta }),
    })
  }

  /** Wait for every append; the first failure, if any. */
  async drain(): Promise<unknown> {
    await this.#tail
    return this.#failed ? this.#failure : undefined
  }

  #append(event: SessionEvent): void {
    this.#tail = this.#tail.then(async () => {
      try {
        await this.session.append(event)
      } catch (error) {
        if (!this.#failed) {
          this.#failed = true
          this.#failure = error
        }
      }
    })
  }
}
