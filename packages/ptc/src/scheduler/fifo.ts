/**
 * The calls waiting to start, first in first out. Not an array's `shift()`: past about 16 000 entries V8
 * moves every later entry on each one, and a harness may raise `maxPendingSubCalls` that far.
 */
export class Fifo<T> {
  #items: (T | undefined)[] = []
  #head = 0

  get first(): T | undefined {
    return this.#items[this.#head]
  }

  push(item: T): void {
    this.#items.push(item)
  }

  shift(): void {
    this.#items[this.#head++] = undefined
    if (this.#head === this.#items.length) {
      this.#items = []
      this.#head = 0
    } else if (this.#head >= 4096 && this.#head * 2 >= this.#items.length) {
      // Drop the spent half now and then: amortized, each entry is copied at most once more.
      this.#items = this.#items.slice(this.#head)
      this.#head = 0
    }
  }

  /** Every waiting entry, in order; the queue is left empty. */
  takeAll(): T[] {
    const all = this.#items.slice(this.#head) as T[]
    this.#items = []
    this.#head = 0
    return all
  }
}
