import { Buffer } from 'node:buffer'
import { CONTROL_NONE } from './protocol.js'

/** Word indexes in the mailbox's shared words. */
const WAITING = 0
const FULL = 1
const BYTES = 2
const COUNT = 3
/** Settle messages the host has posted to the worker (wrapping counter). */
const POSTED = 4
/** Bumped by the host after each thing it does for the worker: the word the worker sleeps on. */
const SIGNAL = 5
const WORDS = 6

/** Room for one reply batch's UTF-8 text; a larger batch goes by message. */
export const MAILBOX_BYTES = 64 * 1024

/**
 * The shared memory of a mailbox, made by the host and handed to the worker in `workerData`.
 * `spinners` is the pool's (see `SpinPlaces`); `spinnerId` names this worker in it.
 */
export interface MailboxMemory {
  readonly words: SharedArrayBuffer
  readonly bytes: SharedArrayBuffer
  readonly spinners: SharedArrayBuffer
  readonly spinnerId: number
}

/**
 * The places of a pool's workers that may spin for a reply at once (see `ReplyMailbox.wait`), one
 * word each: `0` free, or the id of the worker spinning there. A worker terminated while spinning
 * never frees its place itself: the pool frees it (`release`).
 */
export class SpinPlaces {
  readonly memory: SharedArrayBuffer
  readonly #places: Int32Array
  #nextId = 0

  constructor(places: number) {
    this.memory = new SharedArrayBuffer(4 * Math.max(0, places))
    this.#places = new Int32Array(this.memory)
  }

  /** Memory for one new worker's mailbox. */
  mailbox(): MailboxMemory {
    return {
      words: new SharedArrayBuffer(4 * WORDS),
      bytes: new SharedArrayBuffer(MAILBOX_BYTES),
      spinners: this.memory,
      spinnerId: ++this.#nextId,
    }
  }

  /** Frees the place a terminated worker may have held. */
  release(memory: MailboxMemory): void {
    for (let i = 0; i < this.#places.length; i++) Atomics.compareExchange(this.#places, i, memory.spinnerId, 0)
  }
}

/** A reply the worker took from the mailbox; `slept`: it came after the worker went to sleep (not while it spun). */
export interface MailboxReply {
  readonly batch: string
  readonly count: number
  readonly slept: boolean
}

/**
 * The reply path from the host to an engine worker whose guest waits on the host. The worker sleeps
 * in `Atomics.wait` on shared memory instead of in its event loop (no core burnt, however slow the
 * tools); the host (`offer`) claims the wait with a compare-and-swap on the run's id, writes the batch
 * into shared memory and wakes the worker with `Atomics.notify`: a futex wake-up, through neither
 * thread's event loop.
 *
 * A reply the mailbox cannot take (the worker is busy running the guest, or the batch does not fit)
 * goes by message, and the host counts it (`posting`); a worker about to sleep while such a message
 * is unread goes back to its event loop instead, and so does a worker whose run was stopped (`wake`).
 * The worker sleeps on `SIGNAL`, which the host bumps after each of these, having read it before it
 * looked at the rest: no wake-up is lost between its look and its sleep.
 *
 * A worker may spin a little before it sleeps (`wait`'s `spinMs`): a reply that comes meanwhile
 * costs no wake-up at all, which is what makes a sequential sub-call cheap. Spinning burns a core,
 * so only as many workers of a pool spin at once as it has places for (`SpinPlaces`: all cores
 * but the one left to the host thread, which makes the replies); the others go to sleep at once.
 *
 * States of `WAITING`: `0` nobody waits; `runId` the worker waits for that run; `-runId` the host
 * claimed it and is writing (the worker then waits for `FULL`, which the host sets before signalling).
 */
export class ReplyMailbox {
  readonly #words: Int32Array
  readonly #bytes: Buffer
  readonly #control: Int32Array
  readonly #spinners: Int32Array
  readonly #spinnerId: number
  /** Worker side: settle messages read from the port (wrapping, as `POSTED`). */
  #received = 0

  /** `control` is the run's control word array (index 0: abort or wall), looked at whenever the worker wakes. */
  constructor(memory: MailboxMemory, control: Int32Array) {
    this.#words = new Int32Array(memory.words)
    this.#bytes = Buffer.from(memory.bytes)
    this.#control = control
    this.#spinners = new Int32Array(memory.spinners)
    this.#spinnerId = memory.spinnerId
  }

  /**
   * Host side: hands `batch` to the worker if it waits for `runId` and the batch fits; true then.
   * False: the caller calls `posting`, then posts the batch by message.
   */
  offer(runId: number, batch: string, count: number): boolean {
    // UTF-8 takes at most 3 bytes per UTF-16 unit: only a long batch needs measuring.
    if (batch.length * 3 > MAILBOX_BYTES && Buffer.byteLength(batch, 'utf8') > MAILBOX_BYTES) return false
    const words = this.#words
    if (Atomics.compareExchange(words, WAITING, runId, -runId) !== runId) return false
    words[BYTES] = this.#bytes.write(batch, 0, 'utf8')
    words[COUNT] = count
    Atomics.store(words, FULL, 1)
    this.#signal()
    return true
  }

  /**
   * Host side: a settle message is about to be posted to the worker (a sleeping worker goes to read
   * it). Counted before the post, so the worker never reads a message it was not told of.
   */
  posting(): void {
    Atomics.add(this.#words, POSTED, 1)
    this.#signal()
  }

  /** Host side: wakes a sleeping worker to look at the control word (after a stop was written there). */
  wake(): void {
    this.#signal()
  }

  #signal(): void {
    Atomics.add(this.#words, SIGNAL, 1)
    Atomics.notify(this.#words, SIGNAL)
  }

  /** Worker side: one settle message was read from the port (for whichever run). */
  received(): void {
    this.#received = (this.#received + 1) | 0
  }

  /**
   * Worker side: waits until the host replies for `runId`, spinning up to `spinMs` first when a
   * spinning place is free, then sleeping. Returns the reply, or `undefined` when a reply waits in
   * the port or the host asked the run to stop: the worker then goes back to its event loop.
   */
  wait(runId: number, spinMs = 0): MailboxReply | undefined {
    const words = this.#words
    Atomics.store(words, WAITING, runId)
    const place = spinMs > 0 ? this.#takeSpinPlace() : -1
    if (place >= 0) {
      try {
        const deadline = performance.now() + spinMs
        do {
          if (Atomics.load(words, FULL) === 1) return this.#take(false)
          if (this.#leave(runId)) return undefined
        } while (performance.now() < deadline)
      } finally {
        Atomics.store(this.#spinners, place, 0)
      }
    }
    for (;;) {
      const signal = Atomics.load(words, SIGNAL)
      if (Atomics.load(words, FULL) === 1) return this.#take(true)
      if (this.#leave(runId)) return undefined
      // When the host claimed the wait just now, its reply is being written: sleep until it signals.
      Atomics.wait(words, SIGNAL, signal)
    }
  }

  /** A reply waits in the port or the run was stopped, and the wait could be given up (the host did not claim it). */
  #leave(runId: number): boolean {
    const leave =
      Atomics.load(this.#words, POSTED) !== this.#received || Atomics.load(this.#control, 0) !== CONTROL_NONE
    return leave && Atomics.compareExchange(this.#words, WAITING, runId, 0) === runId
  }

  /** A free spinning place, now this worker's, or -1. */
  #takeSpinPlace(): number {
    const places = this.#spinners
    for (let i = 0; i < places.length; i++) if (Atomics.compareExchange(places, i, 0, this.#spinnerId) === 0) return i
    return -1
  }

  #take(slept: boolean): MailboxReply {
    const words = this.#words
    const reply = { batch: this.#bytes.toString('utf8', 0, words[BYTES]), count: words[COUNT] as number, slept }
    Atomics.store(words, FULL, 0)
    Atomics.store(words, WAITING, 0)
    return reply
  }
}
