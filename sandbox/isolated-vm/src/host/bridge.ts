import { HostCalls } from '@ptc/sandbox/backend'
import type { CodeRunLimits, CodeRunRequest } from '@ptc/sandbox'

/** What the bridge asks of its run. */
export interface BridgeSink {
  /** Deliver a batch of `count` results (`SettleEntry[]` as JSON text) into the guest. */
  deliver(batchJson: string, count: number): void
  /** A sub-call cap was hit. */
  stop(reason: 'limit-calls' | 'limit-pending'): void
}

/**
 * The host side of sub-calls on isolated-vm: the sub-call caps (the guest's calls arrive here one
 * by one, so the host enforces them), and the shared `HostCalls` (`request.call` with one run-wide
 * signal, results batched into one guest `settle` per event-loop turn). Results and errors cross as
 * JSON text; host errors cross as their message only.
 */
export class HostBridge {
  readonly #limits: CodeRunLimits
  readonly #sink: BridgeSink
  readonly #calls: HostCalls
  /** Started and not yet settled inside the guest (the pending cap). */
  #unsettled = 0

  constructor(request: CodeRunRequest, limits: CodeRunLimits, sink: BridgeSink) {
    this.#limits = limits
    this.#sink = sink
    this.#calls = new HostCalls(request, { maxChars: limits.memoryBytes }, 'immediate', (batch, count) => {
      this.#unsettled -= count
      sink.deliver(batch, count)
    })
  }

  get subCalls(): number {
    return this.#calls.dispatched
  }

  /** Nothing on the host side can settle a guest promise any more. */
  get idle(): boolean {
    return this.#calls.idle
  }

  dispatch(id: number, name: string, argsJson: string): void {
    if (this.#calls.closed) return
    if (this.#calls.dispatched >= this.#limits.maxSubCalls) return this.#sink.stop('limit-calls')
    if (this.#unsettled >= this.#limits.maxPendingSubCalls) return this.#sink.stop('limit-pending')
    this.#unsettled++
    this.#calls.dispatch(id, name, argsJson)
  }

  /** The run ended: host calls still in flight see their signal abort; late results are dropped. */
  close(): void {
    this.#calls.close()
  }
}
