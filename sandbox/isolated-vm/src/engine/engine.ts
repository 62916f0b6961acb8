import type { IvmModule } from '../load.js'
import { IsolatePool } from './pool.js'
import type { EngineSources, FromEngine, ToEngine } from './protocol.js'
import { EngineRun } from './run.js'
import { memoryLimitMib } from './slot.js'
import type { IsolateSlot } from './slot.js'

/**
 * The runs of one engine (one child process, or the host itself without containment), each in its
 * own isolate, driven by `ToEngine` messages; everything it learns goes out through `send`. The
 * isolates of sessions live here between their runs (idle, under the host's number for each), until
 * the host forgets them or the engine goes.
 */
export class IsolateEngine {
  readonly #send: (message: FromEngine) => void
  readonly #pool: IsolatePool
  readonly #programFilename: string
  readonly #runs = new Map<number, EngineRun>()
  /** Session isolates between runs, by session number. */
  readonly #kept = new Map<number, IsolateSlot>()
  /** Session runs in progress, by session number. */
  readonly #sessionRuns = new Map<number, EngineRun>()
  #disposed = false

  constructor(
    ivm: IvmModule,
    sources: EngineSources,
    send: (message: FromEngine) => void,
    warmIsolates: number,
    memoryBytes: number,
  ) {
    this.#send = send
    this.#programFilename = sources.programFilename
    this.#pool = new IsolatePool(ivm, warmIsolates, memoryLimitMib(memoryBytes), sources.prelude)
  }

  /** Runs started and not yet `ended`. */
  get liveRuns(): number {
    return this.#runs.size
  }

  /** Session isolates kept between runs. */
  get keptIsolates(): number {
    return this.#kept.size
  }

  handle(message: ToEngine): void {
    if (this.#disposed) return
    switch (message.t) {
      case 'start': {
        const { run: id, input } = message
        const session = input.session
        let resumed: IsolateSlot | undefined
        if (session !== undefined) {
          const slot = this.#kept.get(session.id)
          this.#kept.delete(session.id)
          if (slot !== undefined && session.resume && !slot.disposed) resumed = slot
          else slot?.dispose()
        }
        const run = new EngineRun(id, input, this.#programFilename, this.#send, (kept) => {
          this.#runs.delete(id)
          if (session !== undefined && this.#sessionRuns.get(session.id) === run) this.#sessionRuns.delete(session.id)
          if (kept !== undefined) {
            if (this.#disposed || session === undefined) kept.dispose()
            else this.#kept.set(session.id, kept)
          }
          if (this.#runs.size === 0 && !this.#disposed) this.#pool.refill()
        })
        this.#runs.set(id, run)
        if (session !== undefined) this.#sessionRuns.set(session.id, run)
        void run.begin(
          resumed === undefined ? this.#pool.acquire(input.memoryMib) : Promise.resolve(resumed),
          resumed === undefined,
        )
        return
      }
      case 'forget': {
        const slot = this.#kept.get(message.session)
        this.#kept.delete(message.session)
        slot?.dispose()
        this.#sessionRuns.get(message.session)?.discard()
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

  /** Kills every run's isolate, the sessions' and the warm ones. */
  dispose(): void {
    this.#disposed = true
    for (const run of [...this.#runs.values()]) run.stop()
    for (const slot of this.#kept.values()) slot.dispose()
    this.#kept.clear()
    this.#pool.dispose()
  }
}
