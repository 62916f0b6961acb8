import type { ToolCallBlock } from '../types/content.js'
import type { ToolExecutionResult } from '../types/tool.js'
import { SessionQueue } from '../session/queue.js'
import type { Session } from '../types/scope.js'

/**
 * Appends a batch's `tool/call` and `tool/result` events to the agent's
 * session, strictly in the order they are given, without delaying dispatch.
 * The first append failure is kept and reported by `drain()`; later events are
 * still attempted so that the log loses as little as possible.
 */
export class SessionLog {
  readonly #queue: SessionQueue

  constructor(
    session: Session,
    private readonly step: { readonly turn: number; readonly step: number },
  ) {
    this.#queue = new SessionQueue(session)
  }

  call(call: ToolCallBlock): void {
    this.#queue.append({
      type: 'tool/call',
      time: Date.now(),
      ...this.step,
      callId: call.id,
      name: call.name,
      arguments: call.arguments,
    })
  }

  /**
   * The durable projection: content, error and meta; never the execution-local value.
   * `abandoned`: the call did not settle within the grace after it was told to stop.
   */
  result(call: ToolCallBlock, result: ToolExecutionResult, abandoned = false): void {
    this.#queue.append({
      type: 'tool/result',
      time: Date.now(),
      ...this.step,
      ...projection(call, result),
      ...(abandoned && { abandoned: true }),
    })
  }

  /** The eventual outcome of an abandoned call (appended after its batch returned, when its body finally settled). */
  late(call: ToolCallBlock, result: ToolExecutionResult): void {
    this.#queue.append({ type: 'tool/result-late', time: Date.now(), ...this.step, ...projection(call, result) })
  }

  /** Wait for every append; the first failure, if any. */
  drain(): Promise<{ readonly error: unknown } | undefined> {
    return this.#queue.drain()
  }
}

function projection(call: ToolCallBlock, result: ToolExecutionResult): Record<string, unknown> {
  return {
    callId: call.id,
    name: call.name,
    isError: result.isError,
    content: result.content,
    ...(result.error !== undefined && { error: result.error }),
    ...(result.meta !== undefined && { meta: result.meta }),
  }
}
