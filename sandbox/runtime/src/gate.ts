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

/**
 * The CPU a run may use and still count as fresh: past it, a backend that lends places (`RunGate.lend`) gives the
 * run an engine of its own beyond its pool, so that runs that burn CPU no longer keep short ones waiting.
 */
export const LONG_RUN_CPU_MS = 50

/**
 * How long a run may hold its engine while other runs wait for a place and still count as fresh, whatever CPU it
 * used: past it, the run (awaiting a slow tool, or kept off the cores by other runs) lends its place as a run past
 * `LONG_RUN_CPU_MS` does. Ten programs burning CPU on two cores take about 250 ms each to use 50 ms of CPU.
 */
export const LONG_RUN_HELD_MS = 50

/**
 * The default number of places a backend lends past `maxConcurrentRuns`, one per run past `LONG_RUN_CPU_MS` (each
 * such run then has an engine beyond the pool's: a worker thread, an isolate thread), so 16 runaway programs can run
 * before fresh runs wait again.
 */
export const DEFAULT_MAX_EXTRA_RUNS = 16

/** Why a run left the gate's queue without a place. */
export type GateRefusal = 'wall' | 'abort' | 'queue-full' | 'closed'

/** A run the gate did not admit, and why. */
export interface GateRefused {
  readonly ok: false
  readonly reason: GateRefusal
}

/** A place in the gate: call `release` exactly once when the run has ended (extra calls are ignored). */
export interface GatePlace {
  readonly ok: true
  release(): void
}

interface Waiter {
  readonly bytes: number
  readonly settle: (outcome: GatePlace | GateRefused) => void
}

/**
 * Admission of runs into a backend: at most `maxConcurrent` runs hold a place at once (plus the places a
 * backend lends, see `lend`); later runs wait, at most `maxQueued` of them whose programs take at most
 * `maxQueuedBytes` in all (one more ends at once with `queue-full`; a run finding the queue empty may wait
 * whatever its size). Waiting runs queue by tenant (`CodeRunRequest.tenant`; FIFO within one), and a freed place
 * goes to the waiting tenant with the fewest runs in progress, the tenants in turn among equals, so a tenant with a
 * backlog delays another by about one run, and one whose runs hold many places goes after those holding none. A
 * waiting run leaves the queue when its wall deadline passes or its signal aborts. While a run
 * waits, its deadline timer is referenced: a pending run keeps the process alive. Sizes that are not
 * integers in range throw `SandboxUsageError` (`SANDBOX_MISUSE`).
 */
export class RunGate {
  readonly maxConcurrent: number
  readonly maxQueued: number
  readonly maxQueuedBytes: number
  /** The waiting runs of each tenant; the map's order is the turn (a served tenant goes to the back). */
  readonly #queues = new Map<string, Waiter[]>()
  #queued = 0
  #queuedBytes = 0
  #active = 0
  /** Runs holding a place, per tenant that holds any. */
  readonly #activeBy = new Map<string, number>()
  #lent = 0
  /** Aborted by `close()`: the gate is closed once it has. */
  readonly #closing = new AbortController()

  constructor(maxConcurrent: number, maxQueued: number, maxQueuedBytes = DEFAULT_MAX_QUEUED_PROGRAM_BYTES) {
    if (!Number.isInteger(maxConcurrent) || maxConcurrent < 1)
      throw new SandboxUsageError('maxConcurrentRuns must be a positive integer')
    if (!Number.isInteger(maxQueued) || maxQueued < 0)
      throw new SandboxUsageError('maxQueuedRuns must be a non-negative integer')
    if (!Number.isSafeInteger(maxQueuedBytes) || maxQueuedBytes < 1)
      throw new SandboxUsageError('maxQueuedProgramBytes must be a positive integer')
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
    return this.#queued
  }

  /** Places lent past `maxConcurrent` now (see `lend`). */
  get lent(): number {
    return this.#lent
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
   * Sets how many places the backend lends past `maxConcurrent`: as many as the runs it hosts that no longer
   * keep fresh runs waiting (past a slice of CPU, on an engine of their own), up to its cap. Waiting runs take
   * new places at once; when it drops, runs already in keep their places and the next wait.
   */
  lend(places: number): void {
    this.#lent = Math.max(0, Math.floor(places))
    this.#admit()
  }

  /**
   * A place, at once or when one frees, for a run whose program takes `bytes`; a refusal when `deadline`
   * (a `performance.now()` time) passes first, `signal` aborts, the queue is full or the gate closes.
   * `tenant`: the queue the run waits in (`CodeRunRequest.tenant`; default the shared one).
   */
  enter(deadline: number, signal?: AbortSignal, bytes = 0, tenant = ''): Promise<GatePlace | GateRefused> {
    if (this.#closing.signal.aborted) return Promise.resolve({ ok: false, reason: 'closed' })
    if (signal?.aborted) return Promise.resolve({ ok: false, reason: 'abort' })
    if (this.#active < this.#capacity() && this.#queued === 0) return Promise.resolve(this.#place(tenant))
    const full = this.#queued >= this.maxQueued || (this.#queued > 0 && this.#queuedBytes + bytes > this.maxQueuedBytes)
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
        const queue = this.#queues.get(tenant)
        const i = queue?.indexOf(waiter) ?? -1
        if (queue === undefined || i === -1) return
        queue.splice(i, 1)
        if (queue.length === 0) this.#queues.delete(tenant)
        this.#queued--
        this.#queuedBytes -= waiter.bytes
        waiter.settle({ ok: false, reason })
      }
      if (signal !== undefined) stopWaiting = whenAborted(signal, () => leave('abort'))
      const queue = this.#queues.get(tenant)
      if (queue === undefined) this.#queues.set(tenant, [waiter])
      else queue.push(waiter)
      this.#queued++
      this.#queuedBytes += bytes
    })
  }

  /** Refuses every waiting run and every later `enter`; places already held stay valid. */
  close(): void {
    this.#closing.abort()
    const waiters = [...this.#queues.values()].flat()
    this.#queues.clear()
    this.#queued = 0
    this.#queuedBytes = 0
    for (const waiter of waiters) waiter.settle({ ok: false, reason: 'closed' })
  }

  #capacity(): number {
    return this.maxConcurrent + this.#lent
  }

  /**
   * Gives free places to waiting runs: the first of the tenant with the fewest runs in progress (the first in turn
   * among equals), which then goes to the back.
   */
  #admit(): void {
    while (this.#active < this.#capacity() && this.#queued > 0) {
      let tenant = ''
      let fewest = Infinity
      for (const name of this.#queues.keys()) {
        const active = this.#activeBy.get(name) ?? 0
        if (active < fewest) [tenant, fewest] = [name, active]
        if (active === 0) break
      }
      const queue = this.#queues.get(tenant) as Waiter[]
      const next = queue.shift() as Waiter
      this.#queues.delete(tenant)
      if (queue.length > 0) this.#queues.set(tenant, queue)
      this.#queued--
      this.#queuedBytes -= next.bytes
      next.settle(this.#place(tenant))
    }
  }

  #place(tenant: string): GatePlace {
    this.#active++
    this.#activeBy.set(tenant, (this.#activeBy.get(tenant) ?? 0) + 1)
    let released = false
    return {
      ok: true,
      release: () => {
        if (released) return
        released = true
        this.#active--
        const left = (this.#activeBy.get(tenant) ?? 1) - 1
        if (left > 0) this.#activeBy.set(tenant, left)
        else this.#activeBy.delete(tenant)
        this.#admit()
      },
    }
  }
}
