import {
  FinishKind,
  GUEST_LOG_LEVELS,
  HostCalls,
  OutputLedger,
  stopError,
  whenAborted,
  withinOutputBudget,
} from '@ptc/sandbox/backend'
import type { CodeRunError, CodeRunLimits, CodeRunRequest, CodeRunResult, JsonValue } from '@ptc/sandbox'
import type { AdmittedRun, StopReason } from '@ptc/sandbox/backend'
import { FINISH_ERROR } from '../engine/protocol.js'
import type { FromEngine, StartInput, ToEngine } from '../engine/protocol.js'
import { memoryLimitMib } from '../engine/slot.js'
import { EngineOutcomes, type Outcome } from './engine-outcome.js'
import {
  endedBeforeStart,
  endedWhileRunning,
  isolateLost,
  JOBS_STILL_RAN,
  MALFORMED_SUB_CALL,
  NO_ENGINE_READY,
} from '../messages.js'

/** Where a run's engine side lives: a child process, or this process without containment. */
export interface Lane {
  /** Sends one message to the engine hosting `run`. */
  send(run: RunHost, message: ToEngine): void
  /**
   * The run has its answer. `stop`: the host ended it, so the engine must kill it now. Either way
   * the lane makes sure nothing of the run keeps running (and kills its process if it does), and
   * tells a session run what became of its isolate (`engineEnded`, `engineGone`).
   */
  release(run: RunHost, stop: boolean): void
  /** The engine still runs, with the session isolates it keeps. */
  readonly alive: boolean
  /** Why the engine is gone (undefined while `alive`). */
  readonly gone: string | undefined
  /** Disposes the session isolate the engine keeps under `session` (see `SessionStart.id`). */
  forget(session: number): void
}

/** Where a session run runs: in the session's isolate when its engine still keeps it. */
export interface SessionPlacement {
  /** The engine's number for the session's isolate (`SessionStart.id`). */
  readonly id: number
  /** The lane whose engine keeps the session's isolate; undefined when the session has none. */
  readonly home: Lane | undefined
  /** `SessionStart.waitMs`. */
  readonly waitMs: number
}

/** What became of a session run's isolate. */
export type SessionEnd =
  /** Kept by the engine of `lane`, holding `bytes` of heap; `fresh`: it was a new isolate. */
  | { readonly kept: true; readonly lane: Lane; readonly bytes: number; readonly fresh: boolean }
  /** Disposed (`intact`: the run never reached an engine, so the session's isolate is as it was). */
  | { readonly kept: false; readonly reason: string; readonly intact: boolean }

// The engine's copy of the prelude protocol's error kind must be the prelude's.
const _finishError: typeof FinishKind.Error = FINISH_ERROR
void _finishError

let nextRunId = 1

/** The ends after which the engine keeps a session run's isolate (the program completed, threw or did not compile). */
const CLEAN_ENDS: ReadonlySet<string> = new Set(['ok', 'exception', 'syntax', 'invalid-output', 'output-limit'])

/**
 * The host side of one run: the output ledger, its sub-calls through the shared `HostCalls` (the
 * sub-call caps, `request.call` with one run-wide signal, results batched into one guest `settle`
 * per event-loop turn), the wall ceiling and abort (counted from the `run()` call), and the result.
 * The guest runs in an engine reached through a `Lane`; what the engine sends is untrusted and checked
 * here (its report of the run's end in `EngineOutcomes`).
 */
export class RunHost {
  readonly id = nextRunId++
  readonly result: Promise<CodeRunResult>
  readonly input: StartInput
  /** The CPU time (ms) the engine process had used when it answered this run, when it said (`processCpuMs`). */
  engineCpuMs: number | undefined
  readonly #limits: CodeRunLimits
  readonly #startedAt: number
  readonly #ledger: OutputLedger
  readonly #outcomes: EngineOutcomes
  readonly #calls: HostCalls
  #resolve!: (result: CodeRunResult) => void
  #lane: Lane | undefined
  /** Placed again after its first engine went before the run started (`requeue`). */
  #requeued = false
  #ended = false
  #queueMs: number | undefined
  #cpuMs = 0
  #attachedAt: number | undefined
  #settlesSent = 0
  readonly #wallTimer: ReturnType<typeof setTimeout> | undefined
  readonly #onAbort = (): void => this.stop('abort')
  /** Stops waiting for the run's signal (one listener per signal however many runs share it: `whenAborted`). */
  #stopWaiting: (() => void) | undefined
  /** A session run: where its isolate is, and what became of it. */
  readonly session: SessionPlacement | undefined
  readonly sessionEnd: Promise<SessionEnd>
  #resolveSession!: (end: SessionEnd) => void
  #sessionDone = false
  /** Referenced while a session run has its answer but not yet its isolate's fate: `run()` is still pending. */
  #keepAlive: ReturnType<typeof setTimeout> | undefined
  /** The failure kind of the result, once there is one. */
  #errorKind: string | undefined

  readonly #listener: ((text: string) => void) | undefined

  constructor(request: CodeRunRequest, admitted: AdmittedRun, session?: SessionPlacement) {
    this.#listener = request.onLog
    this.session = session
    this.sessionEnd = new Promise((resolve) => (this.#resolveSession = resolve))
    this.#limits = admitted.limits
    this.#startedAt = admitted.startedAt
    const { limits } = admitted
    this.input = {
      source: admitted.program.source,
      bindingsJson: JSON.stringify(admitted.bindings),
      memoryMib: memoryLimitMib(limits.memoryBytes),
      memoryBytes: limits.memoryBytes,
      maxOutputBytes: limits.maxOutputBytes,
      maxSubCalls: limits.maxSubCalls,
      maxArgumentChars: limits.maxArgumentChars,
      cpuMs: limits.cpuMs,
    }
    this.#ledger = new OutputLedger(limits.maxOutputBytes)
    this.#outcomes = new EngineOutcomes(limits, admitted.program, this.#ledger)
    this.#calls = new HostCalls(request, {
      limits,
      // One message to the engine per event-loop turn.
      flush: 'immediate',
      deliver: (batch, count) => {
        this.#settlesSent++
        this.#lane?.send(this, { t: 'settle', run: this.id, batch, count })
      },
      stop: (reason) => this.stop(reason),
    })
    this.result = new Promise((resolve) => (this.#resolve = resolve))
    if (request.signal?.aborted) this.stop('abort')
    else if (request.signal !== undefined) this.#stopWaiting = whenAborted(request.signal, this.#onAbort)
    // Referenced: a pending run keeps the process alive until its deadline.
    if (!this.#ended)
      this.#wallTimer = setTimeout(() => this.stop('wall'), Math.max(0, admitted.deadline - performance.now()))
  }

  get ended(): boolean {
    return this.#ended
  }

  /** The guest's CPU time so far, in ms, as its engine last said (every 50 ms while the guest runs). */
  get cpuMs(): number {
    return this.#cpuMs
  }

  /** How long the run has been on its engine, in ms (0 before it got one). */
  get heldMs(): number {
    return this.#attachedAt === undefined ? 0 : performance.now() - this.#attachedAt
  }

  /** The lane a session run must go to: the one keeping the session's isolate, while it is alive. */
  get home(): Lane | undefined {
    const home = this.session?.home
    return home?.alive === true ? home : undefined
  }

  /** The run got its engine: start the program there (a session run in the session's isolate when `lane` keeps it). */
  attach(lane: Lane): void {
    if (this.#ended) return
    this.#lane = lane
    this.#attachedAt = performance.now()
    this.#queueMs = this.#attachedAt - this.#startedAt
    const session = this.session
    const input: StartInput =
      session === undefined
        ? this.input
        : { ...this.input, session: { id: session.id, resume: session.home === lane, waitMs: session.waitMs } }
    lane.send(this, { t: 'start', run: this.id, input })
  }

  /**
   * The engine it was attached to went before the run started there: the run may be placed again (it has
   * not ended, is no session's, and was not placed again before). False: it fails with that engine.
   */
  requeue(): boolean {
    if (this.#ended || this.session !== undefined || this.#requeued) return false
    this.#requeued = true
    this.#lane = undefined
    return true
  }

  /** The engine is done with this run (`ended`): `kept`, the heap of a session isolate it keeps. */
  engineEnded(kept: number | undefined, fresh: boolean | undefined): void {
    const lane = this.#lane
    if (kept !== undefined && lane !== undefined)
      this.#sessionEnded({ kept: true, lane, bytes: kept, fresh: fresh ?? true })
    else this.#sessionEnded({ kept: false, reason: this.#lossReason(), intact: false })
  }

  /** The engine went before it said what became of this run's isolate. */
  engineGone(why: string): void {
    this.#sessionEnded({ kept: false, reason: isolateLost(why), intact: false })
  }

  #sessionEnded(end: SessionEnd): void {
    if (this.#sessionDone) return
    this.#sessionDone = true
    clearTimeout(this.#keepAlive)
    this.#resolveSession(end)
  }

  /** Why the engine did not keep the isolate. `stopped`: the host stopped the run mid-flight. */
  #lossReason(stopped = false): string {
    const kind = this.#errorKind ?? 'ok'
    return stopped || !CLEAN_ENDS.has(kind) ? endedWhileRunning(kind) : JOBS_STILL_RAN
  }

  /** Ends the run from the host side (the engine kills the guest), settles the result. */
  stop(reason: StopReason): void {
    if (this.#ended) return
    const error = stopError(reason, this.#limits, this.#ledger)
    if (reason === 'wall' && this.#lane === undefined) error.message += NO_ENGINE_READY
    this.#finish(error, undefined, true)
  }

  /** The engine hosting the run is gone (its process died or was killed). */
  lost(message: string, kind: 'crash' | 'memory' = 'crash'): void {
    if (this.#ended) return
    const error = kind === 'memory' ? stopError('memory', this.#limits, this.#ledger) : { kind, message }
    this.#finish(error, undefined, false)
    this.engineGone(message)
  }

  #noteEngineCpu(processCpuMs: unknown): void {
    if (typeof processCpuMs === 'number' && Number.isFinite(processCpuMs) && processCpuMs >= 0)
      this.engineCpuMs = processCpuMs
  }

  /** One message from the engine (untrusted content). */
  receive(message: FromEngine): void {
    if (this.#ended) return
    switch (message.t) {
      case 'call': {
        const { id, name, args } = message
        // `args`: the guest's text, or the length of one the engine held back as too long.
        if (
          typeof id !== 'number' ||
          typeof name !== 'string' ||
          (typeof args !== 'string' && !(Number.isSafeInteger(args) && (args as number) >= 0))
        ) {
          this.#finish({ kind: 'crash', message: MALFORMED_SUB_CALL }, undefined, true)
          return
        }
        this.#calls.start(id, name, args as string | number)
        return
      }
      case 'log': {
        const { level, text } = message
        // An entry the guest knew could not fit, as its length: the ledger overflows on it.
        if (Number.isSafeInteger(text)) return this.stop('output')
        if (typeof text !== 'string' || !GUEST_LOG_LEVELS.includes(level as (typeof GUEST_LOG_LEVELS)[number])) return
        const before = this.#ledger.logs.length
        const fits = this.#ledger.log(text)
        // What the ledger kept (the entry, or a fitting prefix of it on overflow) goes to the listener.
        for (const kept of this.#ledger.logs.slice(before)) this.#onLog(kept)
        if (!fits) this.stop('output')
        return
      }
      case 'finish':
        this.#cpuMs = message.cpuMs
        this.#noteEngineCpu(message.processCpuMs)
        this.#conclude(this.#outcomes.completed(message.kind, message.payload))
        return
      case 'fail':
        this.#cpuMs = message.cpuMs
        this.#noteEngineCpu(message.processCpuMs)
        this.#conclude(this.#outcomes.failed(message.reason, message.detail))
        return
      case 'cpu':
        this.#cpuMs = message.cpuMs
        return
      case 'idle':
        this.#cpuMs = message.cpuMs
        // No guest task runs, every batch sent was applied, nothing pending on the host: nothing can
        // ever wake the guest again.
        if (message.settled === this.#settlesSent && this.#calls.idle) this.stop('stuck')
        return
      case 'catastrophe':
        this.#conclude(this.#outcomes.catastrophe(message.message))
        return
      default:
        return
    }
  }

  /** Ends the run as the engine's report of its end says. */
  #conclude(outcome: Outcome): void {
    this.#finish(outcome.error, outcome.value, outcome.stop, outcome.cutChars)
  }

  /** `stop`: the engine has not ended the run itself and must be told to. */
  /** `cutChars`: what the guest cut from the end of the error's message (`GuestErrorInfo.cutChars`). */
  #finish(error: CodeRunError | undefined, value?: JsonValue, stop = false, cutChars = 0): void {
    if (this.#ended) return
    this.#ended = true
    this.#errorKind = error?.kind
    if (this.#lane === undefined)
      this.#sessionEnded({
        kept: false,
        reason: endedBeforeStart(error?.kind ?? 'ok'),
        intact: true,
      })
    else if (stop) this.#sessionEnded({ kept: false, reason: this.#lossReason(true), intact: false })
    // The lanes' own timers are unreferenced; the engine answers within its grace (or is killed).
    if (this.session !== undefined && !this.#sessionDone) this.#keepAlive = setTimeout(() => undefined, 60_000)
    clearTimeout(this.#wallTimer)
    this.#stopWaiting?.()
    this.#calls.close()
    this.#lane?.release(this, stop)
    const wallMs = performance.now() - this.#startedAt
    const result: CodeRunResult = {
      logs: this.#ledger.logs,
      stats: {
        cpuMs: Math.round(this.#cpuMs * 1000) / 1000,
        wallMs: Math.round(wallMs * 1000) / 1000,
        queueMs: Math.round((this.#queueMs ?? wallMs) * 1000) / 1000,
        subCalls: this.#calls.started,
      },
    }
    if (error !== undefined) result.error = withinOutputBudget(error, this.#limits.maxOutputBytes, cutChars)
    else if (value !== undefined) result.value = value
    this.#resolve(result)
  }

  #onLog(text: string): void {
    try {
      this.#listener?.(text)
    } catch {
      // The caller's listener: its failure is its own.
    }
  }
}
