import { SandboxUsageError } from './errors.js'
import { whenAborted } from './abort.js'

/**
 * The default number of runs a backend lets wait for a place. A waiting run holds its request (a
 * program of at most `maxProgramBytes`) and a deadline timer, no engine.
 */
export const DEFAULT_MAX_QUEUED_RUNS = 256

/**
 * The default total size of the programs waiting in a backend's queue, in UTF-8 bytes. Each waiting run holds
 * its program and, above the runtime, what carried it (a request body, parsed arguments, their snapshot): 256
 * queued runs of 1 MiB programs sent over `ptc serve --http` held 1.2 GiB of the host, measured. With programs of
 * a few kilobytes, `DEFAULT_MAX_QUEUED_RUNS` binds first.
 */
export const DEFAULT_MAX_QUEUED_PROGRAM_BYTES = 16 * 1024 * 1024

/** Why a run left the gate's queue without a place. */
export type GateRefusal = 'wall' | 'abort' | 'queue-full' | 'closed'

/** A place in the gate: call `release` exactly once when the run has ended (extra calls are ignored). */
export interface GatePlace {
  readonly ok: true
  release(): void
}

interface Waiter {
  readonly bytes: number
  readonly settle: (outcome: GatePlace | { ok: false; reason: GateRefusal }) => void
}

/**
 * Admission of runs into a backend: at most `maxConcurrent` runs hold a place at once; later runs
 * wait in FIFO order, at most `maxQueued` of them whose programs take at most `maxQueuedBytes` in all (one
 * more ends at once with `queue-full`; a run finding the queue empty may wait whatever its size). A
 * waiting run leaves the queue when its wall deadline passes or its signal aborts. While a run
 * waits, its deadline timer is referenced: a pending run keeps the process alive. Sizes that are not
 * integers in range throw `SandboxUsageError` (`SANDBOX_MISUSE`).
 */
export class RunGate {
  readonly maxConcurrent: number
  readonly maxQueued: number
  readonly maxQueuedBytes: number
  readonly #queue: Waiter[] = []
  #queuedBytes = 0
  #active = 0
  /** Aborted by `close()`: the gate is closed once it has. */
  readonly #closing = new AbortController()

  constructor(maxConcurrent: number, maxQueued: number, maxQueuedBytes = DEFAULT_MAX_QUEUED_PROGRAM_BYTES) {
    if (!Number.isInteger(maxConcurrent) || maxConcurrent < 1) throw new SandboxUsageError('maxConcurrentRuns must be a positive integer')
    if (!Number.isInteger(maxQueued) || maxQueued < 0) throw new SandboxUsageError('maxQueuedRuns must be a non-negative integer')
    if (!Number.isSafeInteger(maxQueuedBytes) || maxQueuedBytes < 1) throw new SandboxUsageError('maxQueuedProgramBytes must be a positive integer')
    this.maxConcurrent = maxConcurrent
    this.maxQueued = maxQueued
    this.maxQueuedBytes = maxQueuedBytes
  }

  /** Runs holding a place. */
  get active(): number {
    return this.#active
  }

  /** Runs waiting for a place. */
  get queued(): number {
    return this.#queue.length
  }

  /** Aborts when the gate closes (the runtime is disposed): work a run does with its place can stop then. */
  get closing(): AbortSignal {
    return this.#closing.signal
  }

  /** The size of the programs waiting for a place, in bytes. */
  get queuedBytes(): number {
    return this.#queuedBytes
  }

  /**
   * A place, at once or when one frees, for a run whose program takes `bytes`; a refusal when `deadline`
   * (a `performance.now()` time) passes first, `signal` aborts, the queue is full or the gate closes.
   */
  enter(deadline: number, signal?: AbortSignal, bytes = 0): Promise<GatePlace | { ok: false; reason: GateRefusal }> {
    if (this.#closing.signal.aborted) return Promise.resolve({ ok: false, reason: 'closed' })
    if (signal?.aborted) return Promise.resolve({ ok: false, reason: 'abort' })
    if (this.#active < this.maxConcurrent && this.#queue.length === 0) return Promise.resolve(this.#place())
    const full = this.#queue.length >= this.maxQueued || (this.#queue.length > 0 && this.#queuedBytes + bytes > this.maxQueuedBytes)
    if (full) return Promise.resolve({ ok: false, reason: 'queue-full' })
    return new Promise((resolve) => {
      const timer = setTimeout(() => leave('wall'), Math.max(0, deadline - performance.now()))
      let stopWaiting: (() => void) | undefined
      const waiter: Waiter = {
        bytes,
        settle: (outcome) => {
          clearTimeout(timer)
          stopWaiting?.()
          resolve(outcome)
        },
      }
      const leave = (reason: GateRefusal): void => {
        const i = this.#queue.indexOf(waiter)
        if (i === -1) return
        this.#queue.splice(i, 1)
        this.#queuedBytes -= waiter.bytes
        waiter.settle({ ok: false, reason })
      }
      if (signal !== undefined) stopWaiting = whenAborted(signal, () => leave('abort'))
      this.#queue.push(waiter)
      this.#queuedBytes += bytes
    })
  }

  /** Refuses every waiting run and every later `enter`; places already held stay valid. */
  close(): void {
    this.#closing.abort()
    this.#queuedBytes = 0
    for (const waiter of this.#queue.splice(0)) waiter.settle({ ok: false, reason: 'closed' })
  }

  #place(): GatePlace {
    this.#active++
    let released = false
    return {
      ok: true,
      release: () => {
        if (released) return
        released = true
        this.#active--
        const next = this.#queue.shift()
        if (next === undefined) return
        this.#queuedBytes -= next.bytes
        next.settle(this.#place())
      },
    }
  }
}
