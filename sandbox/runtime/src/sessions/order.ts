import { waitForStore } from './store/wait.js'

/**
 * The spill's store operations in order: each key's next one starts once its last one has ended (so that a
 * release never lands after a new claim), and the saves in progress, counted (a bound on the states held).
 */
export class StoreOrder {
  /** The last operation of each key (a save and its release, a claim, a load, a removal). */
  readonly #last = new Map<string, Promise<void>>()
  /** Every save in progress (a key may have two: saved, resumed and let go of again). */
  readonly #saves = new Set<Promise<void>>()

  /** `operation` on the store once the last one of `key` has ended. */
  serial<T>(key: string, operation: () => Promise<T>): Promise<T> {
    const before = this.#last.get(key)
    const result = before === undefined ? operation() : before.then(operation)
    const done = settledOf(result)
    this.#last.set(key, done)
    void done.then(() => {
      if (this.#last.get(key) === done) this.#last.delete(key)
    })
    return result
  }

  /** Counts `saving` among the saves in progress until it settles. */
  count(saving: Promise<unknown>): void {
    const done: Promise<void> = settledOf(saving).finally(() => this.#saves.delete(done))
    this.#saves.add(done)
  }

  /** How many saves are in progress. */
  get saving(): number {
    return this.#saves.size
  }

  /** Settles when one of the saves in progress has. */
  anySaved(): Promise<void> {
    return Promise.race(this.#saves)
  }

  /** `key`'s operations in progress, given up on after `waitMs`. */
  async quiet(key: string, waitMs: number): Promise<void> {
    const last = this.#last.get(key)
    if (last !== undefined) await waitForStore(last, { deadline: performance.now() + waitMs })
  }

  /** Every save and operation in progress. */
  async settled(): Promise<void> {
    await Promise.all([...this.#saves, ...this.#last.values()])
  }
}

/** Fulfils once `operation` settles, either way: a failed operation does not hold up the next. */
function settledOf(operation: Promise<unknown>): Promise<void> {
  return operation.then(
    () => undefined,
    () => undefined,
  )
}
