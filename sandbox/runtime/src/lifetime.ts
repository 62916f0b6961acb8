/** Something held was used after its lifetime ended (a bug in the host code that holds it). */
export class LifetimeError extends Error {
  override name = 'LifetimeError'
}

/**
 * A value held for a while that must be let go exactly once, such as a sandbox session taken for one run. `end(use)`
 * lets it go the holder's way (`use` gets the value); `dispose()`, called in a `finally`, lets it go the default way
 * if nothing did. After the end, `value` and `end` throw `LifetimeError`, and `dispose()` does nothing.
 */
export class Lifetime<T> {
  readonly #value: T
  readonly #onDispose: (value: T) => void
  readonly #what: string
  #alive = true

  /** `what` names the value in the error of a use after the end. */
  constructor(value: T, onDispose: (value: T) => void, what = 'the value') {
    this.#value = value
    this.#onDispose = onDispose
    this.#what = what
  }

  get alive(): boolean {
    return this.#alive
  }

  get value(): T {
    if (!this.#alive) throw new LifetimeError(`${this.#what} was used after it was let go`)
    return this.#value
  }

  /** Ends the lifetime and hands the value to `use`, which lets it go its own way: `dispose()` will not. */
  end<R>(use: (value: T) => R): R {
    const value = this.value
    this.#alive = false
    return use(value)
  }

  /** Lets the value go the default way, unless its lifetime already ended. */
  dispose(): void {
    if (!this.#alive) return
    this.#alive = false
    this.#onDispose(this.#value)
  }
}
