import {
  HostCalls,
  cutCharsOf,
  formatGuestError,
  parseProgramValue,
  stopError,
  whenAborted,
  withinOutputBudget,
} from '@ptc/sandbox/backend'
import { MAX_TIMER_MS, type CodeRunLimits, type CodeRunRequest, type CodeRunResult } from '@ptc/sandbox'
import type { ParkedHostCall, PreparedProgram } from '@ptc/sandbox/backend'
import type { EngineRunOutcome, EngineSuspension, HostStop, SubCallRequest } from '../engine/protocol.js'
import type { SessionMemory } from '../engine/session-memory.js'

/** The engine side of one run, as the host drives it (inline engine or worker). */
export interface EngineChannel {
  settle(batchJson: string, count: number): void
  stop(reason: HostStop): void
  /**
   * Terminates the engine's thread (worker isolation only); returns the log entries the engine had
   * accepted but not flushed yet.
   */
  kill?(): string[]
  /** A durable run's host has only parked calls: suspend once the guest waits on exactly `parked` calls. */
  suspend?(parked: number): void
  /**
   * The run's CPU budget as its engine last said (worker isolation, see `CPU_DEADLINE`): while the guest runs,
   * `running` and the ms until it is spent (below 0 once overrun); while it does not, the ms left.
   */
  cpu?(): { readonly running: boolean; readonly ms: number }
}

/** What a `RunHost` needs from the admitted run (see `AdmittedRun`). */
export interface RunClock {
  readonly limits: CodeRunLimits
  readonly program: PreparedProgram
  /** `performance.now()` at the `run()` call. */
  readonly startedAt: number
  /** `startedAt + limits.wallMs`. */
  readonly deadline: number
}

/**
 * The host side of one run: its sub-calls go through the shared `HostCalls` (the sub-call caps,
 * `request.call` with one run-wide signal that aborts when the run ends, results batched into one
 * `settle` per job), enforces the wall ceiling and the run's signal, and assembles the `CodeRunResult`.
 *
 * The wall clock runs from the `run()` call (`RunClock.startedAt`), so time spent waiting for an
 * engine counts; a run whose deadline passes, or whose signal aborts, before an engine takes it
 * (`attach`) ends at once. The deadline timer is referenced: a pending run keeps the process alive.
 * With a channel that can be killed, a wall or abort stop that the engine does not honour within
 * the grace period terminates it, and the run answers then, without waiting for the thread to exit.
 */
export class RunHost {
  readonly result: Promise<CodeRunResult>
  readonly #clock: RunClock
  readonly #graceMs: number
  readonly #calls: HostCalls
  readonly #logs: string[] = []
  readonly #onLog: ((text: string) => void) | undefined
  #resolve!: (result: CodeRunResult) => void
  #channel: EngineChannel | undefined
  #ended = false
  /** A session run that ended with its engine intact: the memory it left. */
  session: SessionMemory | undefined
  /** A session run whose memory was over its budget: how many bytes (nothing was captured). */
  sessionOver: number | undefined
  /** When the engine took the run (`attach`). */
  #attachedAt: number | undefined
  readonly #wallTimer: ReturnType<typeof setTimeout>
  #killTimer: ReturnType<typeof setTimeout> | undefined
  #cpuTimer: ReturnType<typeof setTimeout> | undefined
  readonly #onAbort = (): void => this.stop('abort')
  /** Stops waiting for the run's signal (one listener per signal however many runs share it: `whenAborted`). */
  #stopWaiting: (() => void) | undefined

  /** A durable run that suspended: its memory and counters, and the calls it waits on. */
  suspended: (EngineSuspension & { parked: readonly ParkedHostCall[]; cpuMs: number; subCalls: number }) | undefined

  /** `started`: the calls a resumed run had started before it suspended. */
  constructor(request: CodeRunRequest, clock: RunClock, graceMs: number, started?: number) {
    this.#calls = new HostCalls(request, {
      limits: clock.limits,
      ...(started !== undefined && { started }),
      quiet: (parked) => this.#channel?.suspend?.(parked),
      // Results are delivered at the end of the job that settled them: the engine is pumped right after.
      flush: 'microtask',
      deliver: (batch, count) => this.#channel?.settle(batch, count),
      stop: (reason) => this.stop(reason),
    })
    this.#clock = clock
    this.#graceMs = graceMs
    this.#onLog = request.onLog
    this.result = new Promise((resolve) => (this.#resolve = resolve))
    if (request.signal !== undefined) this.#stopWaiting = whenAborted(request.signal, this.#onAbort)
    this.#wallTimer = setTimeout(() => this.stop('wall'), Math.max(0, clock.deadline - performance.now()))
  }

  get ended(): boolean {
    return this.#ended
  }

  /** What is left of the wall ceiling now, in ms (the engine's own deadline). */
  get remainingMs(): number {
    return Math.max(0, this.#clock.deadline - performance.now())
  }

  /** The engine starts now. */
  attach(channel: EngineChannel): void {
    this.#channel = channel
    this.#attachedAt = performance.now()
    this.#watchCpu()
  }

  /**
   * The CPU watchdog of a channel that says what is left of the budget (`EngineChannel.cpu`): the engine stops
   * its guest at the budget where QuickJS polls for interrupts, which a guest can keep seconds apart; a guest
   * still running `graceMs` past its budget is stopped from here, its worker terminated at once. Looks again
   * when that could be the case at the earliest.
   */
  #watchCpu(): void {
    const cpu = this.#channel?.cpu
    if (cpu === undefined || this.#ended) return
    const { running, ms } = cpu()
    if (running && ms < -this.#graceMs) {
      this.stop('cpu', 0)
      return
    }
    // Running, `ms` is at least `-graceMs` here: the timer is due when the grace past the budget is over.
    this.#cpuTimer = setTimeout(() => this.#watchCpu(), Math.min(MAX_TIMER_MS, ms + this.#graceMs + 1))
    // The wall timer keeps the process alive for a pending run.
    this.#cpuTimer.unref()
  }

  /**
   * Abort (the run's signal, `dispose()`), the wall ceiling, a sub-call cap or the CPU watchdog. Before `attach`:
   * ends at once. A channel that can be killed is, when the engine has not stopped `graceMs` later.
   */
  stop(reason: HostStop, graceMs = this.#graceMs): void {
    if (this.#ended) return
    const channel = this.#channel
    if (channel === undefined) {
      const error = stopError(reason, this.#clock.limits)
      if (reason === 'wall')
        error.message +=
          ` before the program started (${Math.round(performance.now() - this.#clock.startedAt)} ms ` +
          `preparing and waiting for an engine)`
      this.end({ logs: [], cpuMs: 0, subCalls: 0, broken: false, error })
      return
    }
    channel.stop(reason)
    if (channel.kill !== undefined && this.#killTimer === undefined) {
      const kill = channel.kill
      this.#killTimer = setTimeout(() => {
        if (this.#ended) return
        const logs = kill()
        const error = stopError(reason, this.#clock.limits)
        // Past the CPU budget the outcome is the one the engine gives when it stops the guest itself (which a
        // guest descheduled on a loaded machine may leave to this watchdog), with the CPU time it used.
        if (reason !== 'cpu')
          error.message += ` (the engine did not stop within ${graceMs} ms and its worker was terminated)`
        const cpu = reason === 'cpu' ? channel.cpu?.() : undefined
        const cpuMs =
          cpu !== undefined
            ? this.#clock.limits.cpuMs - (cpu.running ? cpu.ms : 0)
            : performance.now() - (this.#attachedAt ?? this.#clock.startedAt)
        this.end({ logs, cpuMs, subCalls: this.#calls.started, broken: true, error })
      }, graceMs)
    }
  }

  /** New sub-calls and logs from the engine. */
  flush(calls: SubCallRequest[], logs: string[]): void {
    if (this.#ended) return
    for (const log of logs) this.#log(log)
    for (const [id, name, argsJson] of calls) this.#calls.start(id, name, argsJson)
  }

  #log(text: string): void {
    this.#logs.push(text)
    try {
      this.#onLog?.(text)
    } catch {
      // The caller's listener: its failure is its own.
    }
  }

  /** The engine finished (or was killed, or crashed): settles the result exactly once. */
  end(outcome: EngineRunOutcome): void {
    if (this.#ended) return
    this.#ended = true
    const now = performance.now()
    clearTimeout(this.#wallTimer)
    clearTimeout(this.#killTimer)
    clearTimeout(this.#cpuTimer)
    this.#stopWaiting?.()
    this.#calls.close()
    this.session = outcome.session
    this.sessionOver = outcome.sessionOver
    if (outcome.suspended !== undefined) {
      this.suspended = {
        ...outcome.suspended,
        parked: this.#calls.parked,
        cpuMs: outcome.cpuMs,
        subCalls: Math.max(outcome.subCalls, this.#calls.started),
      }
    }
    for (const log of outcome.logs) this.#log(log)
    const { startedAt } = this.#clock
    const result: CodeRunResult = {
      logs: this.#logs,
      stats: {
        cpuMs: round(outcome.cpuMs),
        wallMs: round(now - startedAt),
        queueMs: round((this.#attachedAt ?? now) - startedAt),
        subCalls: Math.max(outcome.subCalls, this.#calls.started),
      },
    }
    const error = outcome.error
    let cutChars = 0
    if (error !== undefined) {
      if ('info' in error) cutChars = cutCharsOf(error.info)
      result.error =
        'info' in error ? { kind: error.kind, message: formatGuestError(error.info, this.#clock.program) } : error
    } else if (outcome.valueJson !== undefined) {
      const parsed = parseProgramValue(outcome.valueJson)
      if ('error' in parsed) result.error = parsed.error
      else result.value = parsed.value
    }
    if (result.error !== undefined)
      result.error = withinOutputBudget(result.error, this.#clock.limits.maxOutputBytes, cutChars)
    this.#resolve(result)
  }
}

function round(ms: number): number {
  return Math.round(ms * 1000) / 1000
}
