import type { IsolateSlot } from './slot.js'

/** How often the heap backstop samples the isolate between guest tasks (and the CPU time is reported). */
const MEMORY_POLL_MS = 50

/** What a run's meter reads from the run and tells it. */
export interface MeterHooks {
  /** The run reached an outcome: the watchdog and the backstop do nothing more. */
  done(): boolean
  /** The guest used up its CPU time, or its heap is over the run's budget. */
  over(limit: 'cpu' | 'memory'): void
  /** The guest's CPU time so far, for the host (sent once it grew by 1 ms or more). */
  cpu(cpuMs: number): void
}

/**
 * The limits of one run that only the isolate's process can watch, from when its program starts: the CPU
 * watchdog (`isolate.cpuTime`), and the heap backstop to isolated-vm's own memory limit.
 */
export class RunMeter {
  readonly #slot: IsolateSlot
  readonly #limits: { readonly cpuMs: number; readonly memoryBytes: number }
  readonly #hooks: MeterHooks
  readonly #cpuBase: bigint
  #cpuEnd = 0
  #cpuTimer: ReturnType<typeof setTimeout> | undefined
  readonly #heapPoll: ReturnType<typeof setInterval>
  #heapInFlight = false
  #cpuSent = 0

  /** Starts both from now, on the isolate of `slot`. */
  constructor(slot: IsolateSlot, limits: { readonly cpuMs: number; readonly memoryBytes: number }, hooks: MeterHooks) {
    this.#slot = slot
    this.#limits = limits
    this.#hooks = hooks
    this.#cpuBase = slot.isolate.cpuTime
    this.#armCpu(limits.cpuMs)
    this.#heapPoll = setInterval(() => this.#pollHeap(), MEMORY_POLL_MS)
  }

  /** The guest's CPU time since the meter started, in ms (the last reading once the isolate is disposed). */
  cpuMs(): number {
    const slot = this.#slot
    if (slot.disposed) return this.#cpuEnd
    try {
      this.#cpuEnd = Number(slot.isolate.cpuTime - this.#cpuBase) / 1e6
    } catch {
      // Disposed meanwhile: keep the last reading.
    }
    return this.#cpuEnd
  }

  /** Stops the watchdog and the backstop. */
  stop(): void {
    clearTimeout(this.#cpuTimer)
    clearInterval(this.#heapPoll)
  }

  /** `timeout` only covers synchronous evaluation, so CPU is watched from here: re-armed for what is left. */
  #armCpu(delayMs: number): void {
    this.#cpuTimer = setTimeout(() => {
      if (this.#hooks.done()) return
      const used = this.cpuMs()
      if (used >= this.#limits.cpuMs) this.#hooks.over('cpu')
      else this.#armCpu(Math.max(1, this.#limits.cpuMs - used))
    }, delayMs)
  }

  /** Backstop for isolated-vm's soft limit; statistics arrive between guest tasks. */
  #pollHeap(): void {
    const slot = this.#slot
    if (this.#hooks.done()) return
    const cpuMs = this.cpuMs()
    if (cpuMs - this.#cpuSent >= 1) {
      this.#cpuSent = cpuMs
      this.#hooks.cpu(cpuMs)
    }
    if (this.#heapInFlight) return
    this.#heapInFlight = true
    slot.isolate.getHeapStatistics().then(
      (heap) => {
        this.#heapInFlight = false
        if (heap.used_heap_size + heap.externally_allocated_size > this.#limits.memoryBytes) this.#hooks.over('memory')
      },
      () => {
        this.#heapInFlight = false
      },
    )
  }
}
