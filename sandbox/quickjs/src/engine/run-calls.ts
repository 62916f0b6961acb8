import { heldBackArguments, type OutputLedger } from '@ptc/sandbox/backend'
import type { EngineRunSink, SubCallRequest } from './protocol.js'

/**
 * The sub-calls of one run on their way to the host: counted, queued as the guest makes them, and sent
 * (`flush`) with the log entries accepted since the last flush.
 */
export class RunCalls {
  /** The sub-calls the guest made (a resumed run's before it suspended included). */
  made = 0
  /** The calls sent or queued that the host has not answered yet. */
  outstanding = 0
  #queued: SubCallRequest[] = []
  #logsSent = 0
  readonly #sink: EngineRunSink
  readonly #ledger: OutputLedger
  readonly #maxArgumentChars: number

  constructor(sink: EngineRunSink, ledger: OutputLedger, maxArgumentChars: number) {
    this.#sink = sink
    this.#ledger = ledger
    this.#maxArgumentChars = maxArgumentChars
  }

  /** How many calls wait for the next flush. */
  get queued(): number {
    return this.#queued.length
  }

  /** A call the guest made: it goes to the host, whose `HostCalls` enforces the sub-call caps. */
  add(id: number, name: string, argsJson: string): void {
    this.made++
    this.outstanding++
    // A text the host would refuse does not cross to it: its length does.
    this.#queued.push([id, name, heldBackArguments(argsJson, this.#maxArgumentChars)])
  }

  /** A suspended run's count of calls and its parked calls, made again. */
  resume(made: number, parked: readonly SubCallRequest[]): void {
    this.made = made
    this.outstanding = parked.length
    this.#queued.push(...parked)
  }

  /** Sends the calls taken and the log entries accepted since the last flush, if there are any. */
  flush(): void {
    const logs = this.#ledger.logs
    if (this.#queued.length === 0 && logs.length === this.#logsSent) return
    const calls = this.#queued
    this.#queued = []
    const fresh = logs.slice(this.#logsSent)
    this.#logsSent = logs.length
    this.#sink.flush(calls, fresh)
  }

  /** The log entries no flush sent. */
  unsentLogs(): string[] {
    return this.#ledger.logs.slice(this.#logsSent)
  }
}
