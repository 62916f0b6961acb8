import type { IvmModule } from '../load.js'
import { IsolatePool } from './pool.js'
import type { EngineSources, FromEngine, ToEngine } from './protocol.js'
import { EngineRun } from './run.js'
import { memoryLimitMib } from './slot.js'

/**
 * The runs of one engine (one child process, or the host itself without containment), each in its
 * own isolate, driven by `ToEngine` messages; everything it learns goes out through `send`.
 */
export class IsolateEngine {
  readonly #send: (message: FromEngine) => void
  readonly #pool: IsolatePool
  readonly #programFilename: string
  readonly #runs = new Map<number, EngineRun>()
  #disposed = false

  constructor(ivm: IvmModule, sources: EngineSources, send: (message: FromEngine) => void, warmIsolates: number, memoryBytes: number) {
    this.#send = send
    this.#programFilename = sources.programFilename
    this.#pool = new IsolatePool(ivm, warmIsolates, memoryLimitMib(memoryBytes), sources.prelude)
  }

  /** Runs started and not yet `ended`. */
  get liveRuns(): number {
    return this.#runs.size
  }

  handle(message: ToEngine): void {
    if (this.#disposed) return
    switch (message.t) {
      case 'start': {
        const { run: id, input } = message
        const run = new EngineRun(id, input, this.#programFilename, this.#send, () => {
          this.#runs.delete(id)
          if (this.#runs.size === 0 && !this.#disposed) this.#pool.refill()
        })
        this.#runs.set(id, run)
        void run.begin(this.#pool.acquire(input.memoryMib))
        return
      }
      case 'settle':
        this.#runs.get(message.run)?.settle(message.batch, message.count)
        return
      case 'stop':
        this.#runs.get(message.run)?.stop()
        return
    }
  }

  /** Kills every run's isolate and the warm ones. */
  dispose(): void {
    this.#disposed = true
    for (const run of [...this.#runs.values()]) run.stop()
    this.#pool.dispose()
  }
}
