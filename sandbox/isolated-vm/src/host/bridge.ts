import { settleHostCall } from '@ptc/sandbox/backend'
import type { CodeRunLimits, CodeRunRequest } from '@ptc/sandbox'

/** What the bridge asks of its run. */
export interface BridgeSink {
  /** Deliver a batch of `count` results (`SettleEntry[]` as JSON text) into the guest. */
  deliver(batchJson: string, count: number): void
  /** A sub-call cap was hit. */
  stop(reason: 'limit-calls' | 'limit-pending'): void
}

/**
 * The host side of sub-calls: counts and caps them, calls `request.call` with one run-wide signal
 * (aborted when the run ends), and batches results into one guest `settle` per microtask turn.
 * Results and errors cross as JSON text; host errors cross as their message only.
 */
export class HostBridge {
  subCalls = 0
  readonly #request: CodeRunRequest
  readonly #limits: CodeRunLimits
  readonly #sink: BridgeSink
  readonly #calls = new AbortController()
  /** Started and not yet settled inside the guest (the pending cap). */
  #unsettled = 0
  /** Waiting on `request.call`. */
  #inHost = 0
  #replies: string[] = []
  #flushQueued = false
  #closed = false

  constructor(request: CodeRunRequest, limits: CodeRunLimits, sink: BridgeSink) {
    this.#request = request
    this.#limits = limits
    this.#sink = sink
  }

  /** Nothing on the host side can settle a guest promise any more. */
  get idle(): boolean {
    return this.#inHost === 0 && this.#replies.length === 0 && !this.#flushQueued
  }

  dispatch(id: number, name: string, argsJson: string): void {
    if (this.#closed) return
    if (this.subCalls >= this.#limits.maxSubCalls) return this.#sink.stop('limit-calls')
    if (this.#unsettled >= this.#limits.maxPendingSubCalls) return this.#sink.stop('limit-pending')
    this.subCalls++
    this.#unsettled++
    this.#inHost++
    void settleHostCall(this.#request, id, name, argsJson, this.#calls.signal, { maxChars: this.#limits.memoryBytes }).then((entry) => {
      if (this.#closed) return
      this.#inHost--
      this.#queue(entry)
    })
  }

  #queue(entry: string): void {
    this.#replies.push(entry)
    if (this.#flushQueued) return
    this.#flushQueued = true
    setImmediate(() => {
      this.#flushQueued = false
      if (this.#closed || this.#replies.length === 0) return
      const batch = `[${this.#replies.join(',')}]`
      const count = this.#replies.length
      this.#unsettled -= count
      this.#replies = []
      this.#sink.deliver(batch, count)
    })
  }

  /** The run ended: host calls still in flight see their signal abort; late results are dropped. */
  close(): void {
    if (this.#closed) return
    this.#closed = true
    this.#replies = []
    this.#calls.abort(new Error('the code run has ended'))
  }
}
