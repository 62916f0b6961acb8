/**
 * A leased state is deleted before the resumed program's first call goes out: until then a process that dies
 * leaves it to be resumed again (the program has done nothing anyone sees); after, the calls it waited on may
 * have run, and must not again. Unconfirmed, the program is stopped there.
 */
import * as messages from '../messages.js'

export class RemovalGate {
  /** The resumed program's signal: the resume's, or this gate's stop. */
  readonly signal: AbortSignal
  /** The store did not confirm the removal: the program was stopped before its first call. */
  unconfirmed = false
  /** Deletes the leased state; whether the store confirmed it (`stops`: unconfirmed, the program is stopped). */
  readonly #remove: ((stops: boolean) => Promise<boolean>) | undefined
  readonly #stop = new AbortController()
  #removed: Promise<boolean> | undefined
  /** The resume has answered (a runtime that never did is given up on): a call of its program then makes nothing go. */
  #over = false

  constructor(remove: ((stops: boolean) => Promise<boolean>) | undefined, signal: AbortSignal) {
    this.#remove = remove
    this.signal = AbortSignal.any([signal, this.#stop.signal])
  }

  /** Before each call of the program: the first deletes the state; unconfirmed, no call goes and the program stops. */
  async beforeCall(): Promise<void> {
    if (this.#remove === undefined) return
    if (this.#over) throw new Error(messages.RESUME_ENDED)
    if (await (this.#removed ??= this.#remove(true))) return
    this.unconfirmed = true
    this.#stop.abort(new Error(messages.STATE_NOT_REMOVED))
    await new Promise<never>(() => undefined)
  }

  /**
   * The program ended: one that made no call deletes its state now (it did nothing another resume would repeat).
   * The deletion to wait for; undefined when there is none.
   */
  atEnd(): Promise<boolean> | undefined {
    if (this.#remove === undefined || this.unconfirmed) return undefined
    return (this.#removed ??= this.#remove(false))
  }

  /** The resume answered. */
  end(): void {
    this.#over = true
  }
}
