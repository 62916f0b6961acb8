import { GUEST_PRELUDE, PROGRAM_FILENAME } from '@ptc/sandbox/backend'
import { IsolateEngine } from '../engine/engine.js'
import type { FromEngine, ToEngine } from '../engine/protocol.js'
import type { IvmModule } from '../load.js'
import type { Lane, RunHost } from './run-host.js'

/**
 * `containment: 'none'`: the engine runs in this process. Fastest, but unsafe against long
 * built-ins: disposing an isolate does not stop a default `sort()` of millions of numbers or a huge
 * BigInt `toString`, which then keep a core busy long after the answer (and can make `process.exit`
 * crash), and V8 running out of memory in an isolate leaves it parked for good.
 */
export class InlineLane implements Lane {
  readonly #engine: IsolateEngine
  readonly #runs = new Map<number, RunHost>()

  constructor(ivm: IvmModule, warmIsolates: number, memoryBytes: number) {
    this.#engine = new IsolateEngine(
      ivm,
      { prelude: GUEST_PRELUDE, programFilename: PROGRAM_FILENAME },
      (message) => this.#receive(message),
      warmIsolates,
      memoryBytes,
    )
  }

  start(run: RunHost): void {
    this.#runs.set(run.id, run)
    run.attach(this)
  }

  send(_run: RunHost, message: ToEngine): void {
    this.#engine.handle(message)
  }

  release(run: RunHost, stop: boolean): void {
    this.#runs.delete(run.id)
    if (stop) this.#engine.handle({ t: 'stop', run: run.id })
  }

  dispose(): void {
    this.#engine.dispose()
  }

  #receive(message: FromEngine): void {
    if (message.t === 'ready' || message.t === 'ended') return
    this.#runs.get(message.run)?.receive(message)
  }
}
