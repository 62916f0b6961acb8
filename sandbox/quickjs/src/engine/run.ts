import type { QuickJSContext, QuickJSHandle, QuickJSRuntime } from 'quickjs-emscripten-core'
import { OutputLedger, PROGRAM_FILENAME, parseQueuedCalls, stopError, type GuestErrorInfo } from '@ptc/sandbox/backend'
import type { CodeRunError } from '@ptc/sandbox'
import { RunErrors, engineFailure, evaluationError, finishedResult, guestErrorInfo } from './guest-errors.js'
import type { EngineImage, ImageHooks } from './image.js'
import type { EngineRunError, HostStop, EngineRunInput, EngineRunSink } from './protocol.js'
import { newRunApi, resumedRunApi } from './run-api.js'
import { RunCalls } from './run-calls.js'
import { RunClock } from './run-clock.js'
import { resumedMemory, startMemory, suspension, type StartMemory } from './run-memory.js'
import type { SessionMemory } from './session-memory.js'
import { engineFailed, NO_PROGRAM_IN_MEMORY } from '../messages.js'

/** The guest's stack: large enough for real programs, far below the host's own. */
const MAX_STACK_BYTES = 256 * 1024
/**
 * Calls the guest hands over while it runs, for a sink on another thread (`EngineRunSink.takesCallsMidRun`):
 * a `Promise.all` of thousands of calls reaches the host in slices while the guest still makes them, instead
 * of once they are all made.
 */
const HAND_OVER_EVERY = 32

/**
 * One run on a QuickJS engine image (see `EngineImage`): the prelude called with the run's
 * bindings, the program, and a job pump; when the run ends the image's memory is put back, so the
 * next run starts from the booted state. Host promises are guest promises made by the prelude and
 * settled through its `settle` function with one JSON text per batch. Limits: CPU (time inside the
 * engine), wall and abort (polled by the interrupt handler; `control[0]` lets another thread stop
 * it), memory (the module's capped WASM memory; `setMemoryLimit` too, though in this build QuickJS
 * counts 8 bytes per allocation, so it only stops single allocations past the limit), stack, output
 * and sub-calls.
 */
export class EngineRun {
  readonly #image: EngineImage
  readonly #input: EngineRunInput
  readonly #sink: EngineRunSink
  readonly #clock: RunClock
  readonly #ledger: OutputLedger
  readonly #calls: RunCalls
  readonly #errors: RunErrors
  #rt: QuickJSRuntime | undefined
  #ctx: QuickJSContext | undefined
  #start: QuickJSHandle | undefined
  #settle: QuickJSHandle | undefined
  #takeCalls: QuickJSHandle | undefined
  /** The program's promise (what `start` returned). */
  #program: QuickJSHandle | undefined
  #stop: CodeRunError | undefined
  #finished = false
  #result: { valueJson?: string; error?: EngineRunError } = {}
  #busy = false
  #done = false
  #broken = false
  /**
   * The engine's memory is this session run's (restored, or resident): a run refused or stopped before
   * that must not capture, or it would hand the session memory that is not its own.
   */
  #onSessionMemory = false
  /** The memory is this durable run's alone, or its session's (see `RunInput.durable`): a suspension may capture it. */
  #onRunMemory = false
  /** The host asked for a suspension once the guest waits only on this many (parked) calls. */
  #suspendWanted: number | undefined
  /** The run ends by suspending. */
  #suspending = false
  /** A session run's long-lived handles, released before its memory is captured (a plain run's go with the reset). */
  readonly #owned: QuickJSHandle[] = []

  constructor(image: EngineImage, input: EngineRunInput, sink: EngineRunSink, control: Int32Array) {
    this.#image = image
    this.#input = input
    this.#sink = sink
    this.#clock = new RunClock(input, control)
    this.#ledger = new OutputLedger(input.limits.maxOutputBytes, input.resume?.outputBytes)
    this.#calls = new RunCalls(sink, this.#ledger, input.limits.maxArgumentChars)
    this.#errors = new RunErrors(image.loaded, input.limits)
  }

  /** Evaluates the prelude and the program and pumps jobs until the guest waits on the host. */
  start(): void {
    this.#busy = true
    try {
      this.#clock.startWall()
      const pre = this.#clock.hostStop()
      if (pre !== undefined) this.#stop = stopError(pre, this.#input.limits)
      else this.#boot()
      this.#pump()
    } catch (error) {
      this.#trap(error)
    } finally {
      this.#busy = false
    }
  }

  /** Delivers a batch of host results (`count` entries) and pumps. */
  deliver(batchJson: string, count: number): void {
    if (this.#done) return
    this.#calls.outstanding -= count
    this.#busy = true
    try {
      const ctx = this.#context()
      const text = ctx.newString(batchJson)
      const error = this.#clock.enter(() => this.#image.callDroppingResult(this.#settle as QuickJSHandle, text))
      text.dispose()
      if (error !== undefined) this.#noteEngineError(error)
      this.#pump()
    } catch (error) {
      this.#trap(error)
    } finally {
      this.#busy = false
    }
  }

  /** The guest is idle until the host delivers a result (it has calls outstanding and the run goes on). */
  get awaitingHost(): boolean {
    return !this.#done && this.#calls.outstanding > 0
  }

  /**
   * The host has `parked` calls and nothing else that could settle a guest promise: once the guest
   * waits on exactly that many calls (none on their way either side), the run suspends. Kept and
   * checked again after each pump, since a reply or a call may still be on its way.
   */
  suspend(parked: number): void {
    if (this.#done || !this.#onRunMemory) return
    this.#suspendWanted = parked
    if (!this.#busy && this.#suspendable()) {
      this.#suspending = true
      this.#finish()
    }
  }

  #suspendable(): boolean {
    return (
      this.#suspendWanted !== undefined &&
      this.#calls.outstanding === this.#suspendWanted &&
      this.#calls.queued === 0 &&
      !this.#finished &&
      this.#stop === undefined &&
      !this.#image.hasPendingJob()
    )
  }

  /** Stops the run from the host (abort, wall ceiling or a sub-call cap while the guest waits). */
  stop(reason: HostStop): void {
    if (this.#done) return
    this.#stop ??= stopError(reason, this.#input.limits)
    if (!this.#busy) this.#finish()
  }

  #context(): QuickJSContext {
    if (this.#ctx === undefined) throw new Error('engine run not started')
    return this.#ctx
  }

  #boot(): void {
    const source = this.#input.source
    const image = this.#image
    const hooks: ImageHooks = {
      limit: (which) => this.#onLimit(which),
      queued: (text) => this.#onQueued(text),
      log: (text) => this.#onLog(text),
      finish: (kind, payload) => this.#onFinish(kind, payload),
      shouldInterrupt: () => this.#shouldInterrupt(),
    }
    image.hooks = hooks
    if (this.#input.resume !== undefined) return this.#bootResumed(this.#input.resume)
    if (!this.#onMemory(startMemory(image, this.#input))) return
    image.reseed()
    const ctx = this.#useEngine()
    const handOverEvery = this.#sink.takesCallsMidRun === true ? HAND_OVER_EVERY : 0
    const api = newRunApi(image, this.#input, handOverEvery, (fn) => this.#clock.enter(fn), this.#owned)
    this.#start = api.start
    this.#settle = api.settle
    this.#takeCalls = api.takeCalls
    const program = this.#clock.enter(() => ctx.evalCode(source, PROGRAM_FILENAME))
    this.#owned.push(program.error ?? program.value)
    if (program.error) {
      const info = this.#errorInfo(program.error)
      if (this.#stop === undefined) {
        this.#finished = true
        this.#result = { error: evaluationError(info, this.#input.limits) }
      }
      return
    }
    const started = this.#clock.enter(() =>
      ctx.callFunction(this.#start as QuickJSHandle, ctx.undefined, program.value),
    )
    if (started.error) this.#noteEngineError(started.error)
    else {
      this.#program = started.value
      this.#owned.push(started.value)
    }
  }

  /** A suspended run's memory back in place, its run's api found again, and its parked calls made again. */
  #bootResumed(resume: NonNullable<EngineRunInput['resume']>): void {
    const image = this.#image
    if (!this.#onMemory(resumedMemory(image, this.#input, resume))) return
    this.#useEngine()
    const api = resumedRunApi(image, (fn) => this.#clock.enter(fn), this.#owned)
    if (api === undefined) {
      this.#stop = { kind: 'crash', message: NO_PROGRAM_IN_MEMORY }
      return
    }
    this.#settle = api.settle
    this.#takeCalls = api.takeCalls
    this.#program = api.program
    this.#clock.cpuUsed = resume.cpuMs
    this.#calls.resume(resume.subCalls, resume.parked)
  }

  /** The run starts on the image's runtime and context, under its memory and stack limits. */
  #useEngine(): QuickJSContext {
    const rt = this.#image.runtime
    const ctx = this.#image.context
    this.#rt = rt
    this.#ctx = ctx
    this.#errors.started()
    rt.setMemoryLimit(this.#input.limits.memoryBytes)
    rt.setMaxStackSize(MAX_STACK_BYTES)
    return ctx
  }

  /** Takes note of the memory the run starts on; false when it was refused (the run stops). */
  #onMemory(memory: StartMemory): boolean {
    if ('stop' in memory) {
      this.#stop = memory.stop
      return false
    }
    this.#onSessionMemory = memory.session
    this.#onRunMemory = memory.run
    return true
  }

  #shouldInterrupt(): boolean {
    if (this.#stop !== undefined || this.#finished) return true
    const due = this.#clock.due()
    if (due === undefined) return false
    this.#stop = stopError(due, this.#input.limits)
    return true
  }

  /**
   * The prelude saw a call go past a cap (`1` `maxSubCalls`, `2` `maxPendingSubCalls`) as it started:
   * the run stops at once, before a synchronous flood of calls fills the guest's queue.
   */
  #onLimit(which: number): void {
    if (this.#stop !== undefined || this.#finished) return
    this.#stop = stopError(which === 1 ? 'limit-calls' : 'limit-pending', this.#input.limits)
  }

  /** Takes the calls the guest queued since the last take (one engine call per pump, not per sub-call). */
  #takeQueuedCalls(): void {
    const takeCalls = this.#takeCalls
    // After the run settled or stopped, queued calls are dropped (the interrupt handler would stop the take anyway).
    if (takeCalls === undefined || this.#stop !== undefined || this.#finished) return
    const text = this.#clock.enter(() => this.#image.callForString(takeCalls))
    if (typeof text !== 'string') return this.#noteEngineError(text)
    this.#onCalls(text)
  }

  /** The calls in a `takeCalls()` text: each goes to the host, whose `HostCalls` enforces the sub-call caps. */
  #onCalls(text: string): void {
    const names = this.#input.bindings
    for (const [id, index, argsJson] of parseQueuedCalls(text))
      if (this.#stop === undefined && !this.#finished) this.#calls.add(id, names[index] ?? '', argsJson)
  }

  /**
   * The guest handed over `HAND_OVER_EVERY` calls while it runs (only for a sink that takes calls mid-run): they
   * leave now, with the log entries before them, so the host starts them while the guest goes on.
   */
  #onQueued(text: string): void {
    if (this.#stop !== undefined || this.#finished || this.#sink.takesCallsMidRun !== true) return
    this.#onCalls(text)
    this.#calls.flush()
  }

  #onLog(text: string): void {
    if (this.#stop !== undefined || this.#finished) return
    if (!this.#ledger.log(text)) this.#stop = stopError('output', this.#input.limits, this.#ledger)
    else this.#sink.logged?.(text)
  }

  #onFinish(kind: number, payload: string): void {
    if (this.#stop !== undefined || this.#finished) return
    this.#finished = true
    this.#result = finishedResult(kind, payload, this.#ledger, this.#input.limits, (info) =>
      this.#errors.outOfMemory(info),
    )
  }

  #pump(): void {
    const rt = this.#rt
    const image = this.#image
    while (rt !== undefined && !this.#finished && this.#stop === undefined && image.hasPendingJob()) {
      const error = this.#clock.enter(() => image.runJobs())
      if (error !== undefined) this.#noteEngineError(error)
    }
    if (rt !== undefined && !this.#done) this.#takeQueuedCalls()
    if (this.#done) return
    if (this.#finished || this.#stop !== undefined || rt === undefined) return this.#finish()
    if (this.#suspendable()) {
      this.#suspending = true
      return this.#finish()
    }
    this.#calls.flush()
    if (this.#done) return
    if (this.#stop !== undefined) return this.#finish()
    if (this.#calls.outstanding === 0 && !image.hasPendingJob()) {
      // The guest went quiet without calling `finish` and without a sub-call pending.
      const lost = this.#errors.unreported(this.#program, () => this.#context())
      if (lost === undefined) this.#stop = stopError('stuck', this.#input.limits)
      else {
        this.#finished = true
        this.#result = { error: lost }
      }
      this.#finish()
    }
  }

  /** An error returned by the engine outside the program's own promise (a job, an interrupt). */
  #noteEngineError(handle: QuickJSHandle): void {
    const info = this.#errorInfo(handle)
    handle.dispose()
    if (this.#errors.outOfMemory(info)) this.#stop ??= stopError('memory', this.#input.limits)
  }

  #errorInfo(handle: QuickJSHandle): GuestErrorInfo {
    return guestErrorInfo(this.#context(), handle, this.#input.limits.maxOutputBytes)
  }

  #trap(error: unknown): void {
    this.#broken = true
    const message = error instanceof Error ? error.message : String(error)
    this.#stop ??= engineFailure(message, this.#input.limits)
    if (!this.#done) this.#finish()
  }

  #finish(): void {
    if (this.#done) return
    this.#done = true
    const outcome = this.#stop === undefined ? this.#result : { error: this.#stop }
    // Whatever the run left (objects, jobs, an interrupted call stack unwound by QuickJS) goes with
    // the memory. Only a trapped module cannot be reset: its WebAssembly stack was not unwound.
    this.#image.hooks = undefined
    if (this.#suspending) return this.#finishSuspended()
    // A session's memory stays in the image (`resident`) for its next run; any other run's goes now.
    const captured = this.#broken || !this.#onSessionMemory ? undefined : this.#capture(true)
    const session = captured !== undefined && 'id' in captured ? captured : undefined
    if (!this.#broken && session === undefined) this.#image.reset()
    this.#ctx = undefined
    this.#rt = undefined
    this.#sink.done({
      ...outcome,
      logs: this.#calls.unsentLogs(),
      cpuMs: this.#clock.cpuUsed,
      subCalls: this.#calls.made,
      broken: this.#broken,
      ...(session === undefined ? {} : { session }),
      ...(captured !== undefined && 'over' in captured ? { sessionOver: captured.over } : {}),
    })
  }

  /** The run suspends: its memory goes to the host (the guest waits on its parked calls), the image is reset. */
  #finishSuspended(): void {
    const captured = this.#capture(false)
    if (!this.#broken) this.#image.reset()
    this.#ctx = undefined
    this.#rt = undefined
    this.#sink.done({
      logs: this.#calls.unsentLogs(),
      cpuMs: this.#clock.cpuUsed,
      subCalls: this.#calls.made,
      broken: this.#broken,
      ...suspension(captured, this.#stop, this.#input.durable?.maxBytes ?? 0, this.#ledger.usedBytes),
    })
  }

  /**
   * A session run's memory, once the run has released what it held (what the program left stays: its
   * globals, and any job it left pending, which the session's next run pumps first). `lend`: it stays
   * resident, so the image may keep its bytes in its own buffer (`EngineImage.keepsCaptures`); a
   * suspension's memory leaves at once.
   */
  #capture(lend: boolean): SessionMemory | { over: number } | undefined {
    try {
      for (const handle of this.#owned.splice(0)) if (handle.alive) handle.dispose()
      return this.#image.capture(this.#input.session?.maxBytes ?? this.#input.durable?.maxBytes, lend)
    } catch (error) {
      // A handle that cannot be released means an engine in an unknown state: the session does not keep it.
      this.#broken = true
      this.#stop ??= {
        kind: 'crash',
        message: engineFailed(error instanceof Error ? error.message : String(error)),
      }
      return undefined
    }
  }
}
