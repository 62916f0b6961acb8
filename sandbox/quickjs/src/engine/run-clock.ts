import {
  CONTROL_NONE,
  CPU_DEADLINE,
  cpuDeadlineWord,
  cpuLeftWord,
  stopOf,
  type EngineRunInput,
  type HostStop,
} from './protocol.js'

/**
 * The clocks of one engine run: the CPU time spent inside the engine (`enter`), its wall deadline, and the
 * control words it shares with the host (a stop the host asks for, and the CPU deadline its watchdog reads).
 */
export class RunClock {
  /** The CPU time spent inside the engine so far (ms), what the run used before it suspended included. */
  cpuUsed = 0
  #sliceStart = -1
  #wallDeadline = 0
  readonly #input: EngineRunInput
  readonly #control: Int32Array

  constructor(input: EngineRunInput, control: Int32Array) {
    this.#input = input
    this.#control = control
  }

  /** Starts the run's wall clock: it has `wallRemainingMs` from now. */
  startWall(): void {
    this.#wallDeadline = performance.now() + this.#input.wallRemainingMs
  }

  /** The stop the host asked for in the control word, if any. */
  hostStop(): HostStop | undefined {
    const c = Atomics.load(this.#control, 0)
    return c === CONTROL_NONE ? undefined : stopOf(c)
  }

  /** Why the run must stop now (the host's stop, its wall, its CPU budget), or undefined. */
  due(): HostStop | undefined {
    const stop = this.hostStop()
    if (stop !== undefined) return stop
    const now = performance.now()
    if (now >= this.#wallDeadline) return 'wall'
    if (this.#sliceStart >= 0 && this.cpuUsed + (now - this.#sliceStart) >= this.#input.limits.cpuMs) return 'cpu'
    return undefined
  }

  /** Runs `fn` inside the engine, its time counted as the run's CPU. */
  enter<T>(fn: () => T): T {
    const start = performance.now()
    this.#sliceStart = start
    const base = this.#input.clockBase
    const left = this.#input.limits.cpuMs - this.cpuUsed
    // The host's watchdog (worker isolation) stops the guest should it run past this without the engine noticing.
    if (base !== undefined)
      Atomics.store(this.#control, CPU_DEADLINE, cpuDeadlineWord(performance.timeOrigin + start - base + left))
    try {
      return fn()
    } finally {
      this.cpuUsed += performance.now() - start
      this.#sliceStart = -1
      if (base !== undefined)
        Atomics.store(this.#control, CPU_DEADLINE, cpuLeftWord(this.#input.limits.cpuMs - this.cpuUsed))
    }
  }
}
