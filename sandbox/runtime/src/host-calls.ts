import { settleHostCall, type ResultBounds } from './settle.js'
import type { CodeRunRequest } from './types.js'

/**
 * When the settle entries of the calls that finished are delivered, together: `microtask` (at the
 * end of the current job, the QuickJS backend: it pumps the engine right after), or `immediate`
 * (after the event loop's I/O phase, isolated-vm: one message to the engine per loop turn).
 */
export type ReplyFlush = 'microtask' | 'immediate'

/**
 * The host side of one run's sub-calls, as every backend runs them: each call goes through
 * `settleHostCall` (a fresh parse handed to `request.call`, the outcome as a settle entry) with one
 * run-wide signal, aborted by `close()`; the entries of the calls that finish before the next flush
 * are delivered together, as one batch (`[entry,…]` JSON text and its count). After `close()`, late
 * results are dropped.
 */
export class HostCalls {
  readonly #request: CodeRunRequest
  readonly #bounds: ResultBounds
  readonly #deliver: (batchJson: string, count: number) => void
  readonly #flush: ReplyFlush
  readonly #signal = new AbortController()
  #replies: string[] = []
  #flushQueued = false
  /** Calls waiting on `request.call`. */
  #inHost = 0
  #closed = false
  /** Calls dispatched. */
  dispatched = 0

  constructor(request: CodeRunRequest, bounds: ResultBounds, flush: ReplyFlush, deliver: (batchJson: string, count: number) => void) {
    this.#request = request
    this.#bounds = bounds
    this.#flush = flush
    this.#deliver = deliver
  }

  /** Nothing on the host side can settle a guest promise any more. */
  get idle(): boolean {
    return this.#inHost === 0 && this.#replies.length === 0 && !this.#flushQueued
  }

  get closed(): boolean {
    return this.#closed
  }

  /** One call the guest made: `request.call` runs now, its entry is delivered with the next batch. */
  dispatch(id: number, name: string, argsJson: string): void {
    if (this.#closed) return
    this.dispatched++
    this.#inHost++
    void settleHostCall(this.#request, id, name, argsJson, this.#signal.signal, this.#bounds).then((entry) => {
      if (this.#closed) return
      this.#inHost--
      this.#queue(entry)
    })
  }

  /** The run ended: calls still in flight see their signal abort; late results are dropped. */
  close(): void {
    if (this.#closed) return
    this.#closed = true
    this.#replies = []
    this.#signal.abort(new Error('the code run has ended'))
  }

  #queue(entry: string): void {
    this.#replies.push(entry)
    if (this.#flushQueued) return
    this.#flushQueued = true
    if (this.#flush === 'microtask') queueMicrotask(this.#deliverBatch)
    else setImmediate(this.#deliverBatch)
  }

  readonly #deliverBatch = (): void => {
    this.#flushQueued = false
    if (this.#closed || this.#replies.length === 0) return
    const batch = `[${this.#replies.join(',')}]`
    const count = this.#replies.length
    this.#replies = []
    this.#deliver(batch, count)
  }
}
