import { ModuleCache } from '../engine/module-cache.js'
import type { EngineImage } from '../engine/image.js'
import type { QuickJSVariantName } from '../engine/module.js'
import { controlOf, sourceOf, type RunInput } from '../engine/protocol.js'
import { EngineRun } from '../engine/run.js'
import { warmUpWhenIdle } from '../engine/warm-up.js'
import type { Engines } from './engines.js'
import type { RunHost } from './run-host.js'
import { loadFailed } from '../messages.js'

/**
 * Runs engine runs on the calling thread. For trusted code and benchmarks: it keeps the CPU, memory,
 * stack, output and sub-call limits, the wall ceiling and abort where QuickJS polls for interrupts and
 * while the guest waits on the host, but it cannot stop a long native builtin (a huge `join`, a
 * backtracking regex), nor a guest between two polls (every 10 000 calls or jumps: a recursion that
 * catches its own stack overflows keeps them about 2.5 s apart here): those block the calling thread.
 */
export class InlineEngines implements Engines {
  readonly #cache: ModuleCache
  /** The module `warm()` loads, which runs that arrive meanwhile wait for rather than load their own. */
  #warming: Promise<void> | undefined
  /** Cancels the warm-up program (see `warmUp`), which runs once no run came for a while after the module loaded. */
  #cancelWarmUp: (() => void) | undefined

  constructor(
    variant: QuickJSVariantName,
    private readonly warmBytes: number,
  ) {
    this.#cache = new ModuleCache(variant)
  }

  warm(): void {
    if (this.#warming !== undefined) return
    const image = this.#cache.acquire(this.warmBytes)
    if (!(image instanceof Promise)) return void this.#cache.release(image, false)
    this.#warming = image.then(
      (loaded) => {
        this.#cache.release(loaded, false)
        this.#cancelWarmUp = warmUpWhenIdle(this.#cache, this.warmBytes)
      },
      () => undefined, // a run meets the failure again and reports it
    )
  }

  execute(host: RunHost, input: RunInput): void {
    // A run came first: it warms what it runs itself.
    this.#cancelWarmUp?.()
    const warming = this.#warming
    if (warming !== undefined) {
      void warming.then(() => {
        this.#warming = undefined
        if (!host.ended) this.execute(host, input)
      })
      return
    }
    const acquired = this.#cache.acquire(input.limits.memoryBytes, input.session?.id)
    // A session run's image first learns its build's volatile bytes (once per variant: `prepareSessions`).
    const capturing = input.session !== undefined || input.durable !== undefined || input.resume !== undefined
    const image =
      !capturing || (!(acquired instanceof Promise) && acquired.sessionsPrepared)
        ? acquired
        : Promise.resolve(acquired).then(async (m) => {
            await m.prepareSessions()
            return m
          })
    if (image instanceof Promise) {
      image.then(
        (m) => this.#run(host, input, m),
        (error: unknown) =>
          host.end({
            logs: [],
            cpuMs: 0,
            subCalls: 0,
            broken: true,
            error: { kind: 'crash', message: loadFailed(error) },
          }),
      )
    } else {
      this.#run(host, input, image)
    }
  }

  #run(host: RunHost, input: RunInput, image: EngineImage): void {
    if (host.ended) {
      this.#cache.release(image, false)
      return
    }
    const control = new Int32Array(1)
    // On this thread a session's capture is never transferred: the image may keep it in its own buffer.
    image.keepsCaptures = true
    const engine = new EngineRun(
      image,
      { ...input, source: sourceOf(input), wallRemainingMs: host.remainingMs },
      {
        flush: (calls, logs) => host.flush(calls, logs),
        done: (outcome) => {
          this.#cache.release(image, outcome.broken)
          host.end(outcome)
        },
      },
      control,
    )
    host.attach({
      settle: (batch, count) => engine.deliver(batch, count),
      stop: (reason) => {
        Atomics.store(control, 0, controlOf(reason))
        engine.stop(reason)
      },
      suspend: (parked) => engine.suspend(parked),
    })
    engine.start()
  }

  async dispose(): Promise<void> {
    this.#cancelWarmUp?.()
    this.#cache.clear()
  }
}
