import type { IvmModule } from '../load.js'
import { IsolateSlot } from './slot.js'

/**
 * A few pre-created isolates (context and setup included) for the runtime's default memory limit,
 * so a run skips the ~1.6 ms of isolate creation. Each slot serves one run; the pool refills in
 * the background while no run is live (see `refill`). Runs with another memory
 * limit (or an empty pool) create their isolate on demand.
 */
export class IsolatePool {
  readonly #ivm: IvmModule
  readonly #size: number
  readonly #memoryMib: number
  readonly #prelude: string
  readonly #ready: IsolateSlot[] = []
  #filling = false
  #disposed = false

  constructor(ivm: IvmModule, size: number, memoryMib: number, prelude: string) {
    this.#ivm = ivm
    this.#prelude = prelude
    this.#size = size
    this.#memoryMib = memoryMib
    this.refill()
  }

  /** Isolates ready now (for tests and stats). */
  get readyCount(): number {
    return this.#ready.length
  }

  /** A fresh slot with `memoryMib`: a warm one when it matches the pool's limit, else a new one. */
  acquire(memoryMib: number): Promise<IsolateSlot> {
    if (memoryMib === this.#memoryMib) {
      const slot = this.#ready.shift()
      if (slot !== undefined) return Promise.resolve(slot)
    }
    try {
      return Promise.resolve(IsolateSlot.create(this.#ivm, memoryMib, this.#prelude))
    } catch (error) {
      return Promise.reject(error instanceof Error ? error : new Error(String(error)))
    }
  }

  /**
   * Tops the pool up in the background, one isolate at a time. The runtime calls it when no run is
   * live: creating an isolate blocks this thread for ~1.6 ms, which would otherwise land in the
   * middle of a run's sub-call round trips.
   */
  refill(): void {
    if (this.#filling || this.#disposed || this.#ready.length >= this.#size) return
    this.#filling = true
    // setImmediate: isolate creation blocks this thread for ~1.6 ms; never on the caller's path.
    setImmediate(() => {
      this.#filling = false
      if (this.#disposed) return
      let slot: IsolateSlot
      try {
        slot = IsolateSlot.create(this.#ivm, this.#memoryMib, this.#prelude)
      } catch {
        // Creation failed (out of memory?): stop warming; runs create isolates on demand.
        return
      }
      this.#ready.push(slot)
      this.refill()
    }).unref()
  }

  /** Disposes the warm isolates; later `acquire` calls still work (the runtime guards against them). */
  dispose(): void {
    this.#disposed = true
    for (const slot of this.#ready.splice(0)) slot.dispose()
  }
}
