import type { QuickJSContext, QuickJSHandle, QuickJSRuntime } from 'quickjs-emscripten-core'
import {
  FinishKind,
  OutputLedger,
  PROGRAM_FILENAME,
  heldBackArguments,
  maxErrorChars,
  parseQueuedCalls,
  stopError,
} from '@ptc/sandbox/backend'
import type { CodeRunError } from '@ptc/sandbox'
import type { GuestErrorInfo, QueueCaps } from '@ptc/sandbox/backend'
import type { EngineImage, ImageHooks, SessionMemory } from './image.js'
import {
  CONTROL_NONE,
  CPU_DEADLINE,
  cpuDeadlineWord,
  cpuLeftWord,
  stopOf,
  type EngineRunError,
  type HostStop,
  type EngineRunInput,
  type EngineRunSink,
  type SubCallRequest,
} from './protocol.js'

/** The guest's stack: large enough for real programs, far below the host's own. */
const MAX_STACK_BYTES = 256 * 1024
/**
 * The thread's own stack ran out inside the engine: some of QuickJS's recursions (its parser, JSON, array
 * joins) take more of it than of the stack QuickJS counts against MAX_STACK_BYTES, so V8's limit comes
 * first (inline on the calling thread's 1 MB, in a worker on its 4 MB). The program caused it: an exception
 * of the program's (uncatchable there, and the module is dropped), not a crash of the engine.
 */
const NATIVE_STACK_OVERFLOW = /Maximum call stack size exceeded/
/** What the prelude reports for a thrown value it could not describe (see `GUEST_PRELUDE`). */
const UNFORMATTABLE = '[unformattable thrown value]'
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
  readonly #control: Int32Array
  readonly #ledger: OutputLedger
  #rt: QuickJSRuntime | undefined
  #ctx: QuickJSContext | undefined
  #start: QuickJSHandle | undefined
  #settle: QuickJSHandle | undefined
  #takeCalls: QuickJSHandle | undefined
  /** The program's promise (what `start` returned). */
  #program: QuickJSHandle | undefined
  #cpuUsed = 0
  #refusedAtStart = 0
  #sliceStart = -1
  #wallDeadline = 0
  #stop: CodeRunError | undefined
  #finished = false
  #result: { valueJson?: string; error?: EngineRunError } = {}
  #busy = false
  #done = false
  #broken = false
  #calls: SubCallRequest[] = []
  #logsSent = 0
  #subCalls = 0
  #outstanding = 0
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
    this.#control = control
    this.#ledger = new OutputLedger(input.limits.maxOutputBytes, input.resume?.outputBytes)
  }

  /** Evaluates the prelude and the program and pumps jobs until the guest waits on the host. */
  start(): void {
    this.#busy = true
    try {
      this.#wallDeadline = performance.now() + this.#input.wallRemainingMs
      const pre = Atomics.load(this.#control, 0)
      if (pre !== CONTROL_NONE) this.#stop = stopError(stopOf(pre), this.#input.limits)
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
    this.#outstanding -= count
    this.#busy = true
    try {
      const ctx = this.#context()
      const text = ctx.newString(batchJson)
      const error = this.#enter(() => this.#image.callDroppingResult(this.#settle as QuickJSHandle, text))
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
    return !this.#done && this.#outstanding > 0
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
      this.#outstanding === this.#suspendWanted &&
      this.#calls.length === 0 &&
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
    const { limits, bindings, source } = this.#input
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
    const session = this.#input.session
    if (this.#input.durable !== undefined && session === undefined) {
      // Nothing above the booted state: a suspension captures this run's memory and no other's.
      const refused = image.restore(undefined)
      if (refused !== undefined) {
        this.#stop = { kind: 'crash', message: refused }
        return
      }
      this.#onRunMemory = true
    } else if (session === undefined) {
      if (image.resident !== undefined) image.reset()
    } else if (session.id === undefined || session.id !== image.resident) {
      const refused =
        session.id !== undefined && session.memory === undefined
          ? `the session's memory ${session.id} is not in this engine`
          : image.restore(session.memory)
      if (refused !== undefined) {
        this.#stop = { kind: /cap|allocated/.test(refused) ? 'memory' : 'crash', message: refused }
        return
      }
    }
    // From here the memory is the session's: only now may the run's end capture it as the session's (and
    // a durable session run's suspension, the session's state with the run's).
    this.#onSessionMemory = session !== undefined
    if (session !== undefined && this.#input.durable !== undefined) this.#onRunMemory = true
    const rt = image.runtime
    const ctx = image.context
    this.#rt = rt
    this.#ctx = ctx
    image.reseed()
    this.#refusedAtStart = image.loaded.growth.refused
    rt.setMemoryLimit(limits.memoryBytes)
    rt.setMaxStackSize(MAX_STACK_BYTES)
    // The run's long-lived handles (bindings, api, start, settle, program) are not disposed: `reset()` frees them.
    const names = ctx.newString(JSON.stringify(bindings))
    const caps: QueueCaps = {
      maxSubCalls: limits.maxSubCalls,
      maxPendingSubCalls: limits.maxPendingSubCalls,
      handOverEvery: this.#sink.takesCallsMidRun === true ? HAND_OVER_EVERY : 0,
    }
    const queue = ctx.newString(JSON.stringify(caps))
    const maxOutput = ctx.newNumber(limits.maxOutputBytes)
    this.#owned.push(names, queue, maxOutput)
    const api = ctx.unwrapResult(
      this.#enter(() => ctx.callFunction(image.prelude, ctx.undefined, image.host, names, queue, maxOutput)),
    )
    this.#start = ctx.getProp(api, 'start')
    this.#settle = ctx.getProp(api, 'settle')
    this.#takeCalls = ctx.getProp(api, 'takeCalls')
    this.#owned.push(api, this.#start, this.#settle, this.#takeCalls)
    const program = this.#enter(() => ctx.evalCode(source, PROGRAM_FILENAME))
    this.#owned.push(program.error ?? program.value)
    if (program.error) {
      const info = this.#errorInfo(program.error)
      if (this.#stop === undefined) {
        this.#finished = true
        // Evaluating the wrapper also declares a session program's globals: a TypeError there (a frozen global
        // object) is the program's runtime error, not a syntax one.
        const kind = info.name === 'SyntaxError' ? 'syntax' : 'exception'
        this.#result = { error: isOutOfMemory(info) ? stopError('memory', this.#input.limits) : { kind, info } }
      }
      return
    }
    const started = this.#enter(() => ctx.callFunction(this.#start as QuickJSHandle, ctx.undefined, program.value))
    if (started.error) this.#noteEngineError(started.error)
    else {
      this.#program = started.value
      this.#owned.push(started.value)
    }
  }

  /** A suspended run's memory back in place, its run's api found again, and its parked calls made again. */
  #bootResumed(resume: NonNullable<EngineRunInput['resume']>): void {
    const image = this.#image
    const refused = image.restore(resume.memory)
    if (refused !== undefined) {
      this.#stop = { kind: /cap|allocated/.test(refused) ? 'memory' : 'crash', message: refused }
      return
    }
    this.#onRunMemory = true
    // A session run's memory: its end captures it as the session's.
    this.#onSessionMemory = this.#input.session !== undefined
    const rt = image.runtime
    const ctx = image.context
    this.#rt = rt
    this.#ctx = ctx
    this.#refusedAtStart = image.loaded.growth.refused
    rt.setMemoryLimit(this.#input.limits.memoryBytes)
    rt.setMaxStackSize(MAX_STACK_BYTES)
    const api = ctx.unwrapResult(
      this.#enter(() => ctx.callFunction(image.prelude, ctx.undefined, image.host, ctx.null, ctx.null)),
    )
    this.#owned.push(api)
    if (ctx.typeof(api) !== 'object') {
      this.#stop = { kind: 'crash', message: 'the suspended run has no program in progress in its memory' }
      return
    }
    this.#settle = ctx.getProp(api, 'settle')
    this.#takeCalls = ctx.getProp(api, 'takeCalls')
    this.#program = ctx.getProp(api, 'program')
    this.#owned.push(this.#settle, this.#takeCalls, this.#program)
    this.#cpuUsed = resume.cpuMs
    this.#subCalls = resume.subCalls
    this.#outstanding = resume.parked.length
    this.#calls.push(...resume.parked)
  }

  #shouldInterrupt(): boolean {
    if (this.#stop !== undefined || this.#finished) return true
    const c = Atomics.load(this.#control, 0)
    if (c !== CONTROL_NONE) {
      this.#stop = stopError(stopOf(c), this.#input.limits)
      return true
    }
    const now = performance.now()
    if (now >= this.#wallDeadline) {
      this.#stop = stopError('wall', this.#input.limits)
      return true
    }
    if (this.#sliceStart >= 0 && this.#cpuUsed + (now - this.#sliceStart) >= this.#input.limits.cpuMs) {
      this.#stop = stopError('cpu', this.#input.limits)
      return true
    }
    return false
  }

  /** A call the guest made: it goes to the host, whose `HostCalls` enforces the sub-call caps. */
  #onCall(id: number, name: string, argsJson: string): void {
    if (this.#stop !== undefined || this.#finished) return
    this.#subCalls++
    this.#outstanding++
    // A text the host would refuse does not cross to it: its length does.
    this.#calls.push([id, name, heldBackArguments(argsJson, this.#input.limits.maxArgumentChars)])
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
    const text = this.#enter(() => this.#image.callForString(takeCalls))
    if (typeof text !== 'string') return this.#noteEngineError(text)
    this.#onCalls(text)
  }

  /** The calls in a `takeCalls()` text. */
  #onCalls(text: string): void {
    const names = this.#input.bindings
    for (const [id, index, argsJson] of parseQueuedCalls(text)) this.#onCall(id, names[index] ?? '', argsJson)
  }

  /**
   * The guest handed over `HAND_OVER_EVERY` calls while it runs (only for a sink that takes calls mid-run): they
   * leave now, with the log entries before them, so the host starts them while the guest goes on.
   */
  #onQueued(text: string): void {
    if (this.#stop !== undefined || this.#finished || this.#sink.takesCallsMidRun !== true) return
    this.#onCalls(text)
    this.#flush()
  }

  /** Sends the calls taken and the log entries accepted since the last flush, if there are any. */
  #flush(): void {
    const logs = this.#ledger.logs
    if (this.#calls.length === 0 && logs.length === this.#logsSent) return
    const calls = this.#calls
    this.#calls = []
    const fresh = logs.slice(this.#logsSent)
    this.#logsSent = logs.length
    this.#sink.flush(calls, fresh)
  }

  #onLog(text: string): void {
    if (this.#stop !== undefined || this.#finished) return
    if (!this.#ledger.log(text)) this.#stop = stopError('output', this.#input.limits, this.#ledger)
    else this.#sink.logged?.(text)
  }

  #onFinish(kind: number, payload: string): void {
    if (this.#stop !== undefined || this.#finished) return
    this.#finished = true
    if (kind === FinishKind.Undefined) this.#result = {}
    else if (kind === FinishKind.Value) {
      this.#result = this.#ledger.value(payload)
        ? { valueJson: payload }
        : { error: { kind: 'output-limit', message: this.#ledger.describeOverflow('value') } }
    } else if (kind === FinishKind.InvalidValue) {
      this.#result = { error: { kind: 'invalid-output', message: payload } }
    } else {
      let info: GuestErrorInfo
      try {
        info = JSON.parse(payload) as GuestErrorInfo
      } catch {
        info = { message: 'unreadable error' }
      }
      // Out of memory, QuickJS may fail to allocate the error itself and throw `null`.
      this.#result = {
        error: this.#outOfMemory(info) ? stopError('memory', this.#input.limits) : { kind: 'exception', info },
      }
    }
  }

  /**
   * Whether a guest error is the memory ceiling: QuickJS's out-of-memory error, or — when WebAssembly
   * refused to grow the heap during this run — what is left when QuickJS could not even allocate that
   * error (it throws `null`) or the prelude could not describe it.
   */
  #outOfMemory(info: GuestErrorInfo): boolean {
    if (isOutOfMemory(info)) return true
    const anonymous = info.name === undefined && (info.message === 'null' || info.message === UNFORMATTABLE)
    return anonymous && this.#heapRefused()
  }

  /** WebAssembly refused to grow the module's memory (its cap) since this run started. */
  #heapRefused(): boolean {
    return this.#image.loaded.growth.refused > this.#refusedAtStart
  }

  #enter<T>(fn: () => T): T {
    const start = performance.now()
    this.#sliceStart = start
    const base = this.#input.clockBase
    const left = this.#input.limits.cpuMs - this.#cpuUsed
    // The host's watchdog (worker isolation) stops the guest should it run past this without the engine noticing.
    if (base !== undefined)
      Atomics.store(this.#control, CPU_DEADLINE, cpuDeadlineWord(performance.timeOrigin + start - base + left))
    try {
      return fn()
    } finally {
      this.#cpuUsed += performance.now() - start
      this.#sliceStart = -1
      if (base !== undefined)
        Atomics.store(this.#control, CPU_DEADLINE, cpuLeftWord(this.#input.limits.cpuMs - this.#cpuUsed))
    }
  }

  #pump(): void {
    const rt = this.#rt
    const image = this.#image
    while (rt !== undefined && !this.#finished && this.#stop === undefined && image.hasPendingJob()) {
      const error = this.#enter(() => image.runJobs())
      if (error !== undefined) this.#noteEngineError(error)
    }
    if (rt !== undefined && !this.#done) this.#takeQueuedCalls()
    if (this.#done) return
    if (this.#finished || this.#stop !== undefined || rt === undefined) return this.#finish()
    if (this.#suspendable()) {
      this.#suspending = true
      return this.#finish()
    }
    this.#flush()
    if (this.#done) return
    if (this.#stop !== undefined) return this.#finish()
    if (this.#outstanding === 0 && !image.hasPendingJob()) {
      const lost = this.#unreportedOutcome()
      if (lost === undefined) this.#stop = stopError('stuck', this.#input.limits)
      else {
        this.#finished = true
        this.#result = { error: lost }
      }
      this.#finish()
    }
  }

  /**
   * The guest went quiet without calling `finish` and without a sub-call pending. Out of memory,
   * QuickJS may fail to queue the job that would report the outcome (bellard: the promise settled
   * unreported; quickjs-ng: it stays pending, or `start` itself failed): with the heap at its cap that
   * is the memory limit. A settled-but-unreported rejection is reported as what it was.
   */
  #unreportedOutcome(): EngineRunError | undefined {
    if (this.#program === undefined) return this.#heapRefused() ? stopError('memory', this.#input.limits) : undefined
    const state = this.#context().getPromiseState(this.#program)
    if (state.type === 'pending') return this.#heapRefused() ? stopError('memory', this.#input.limits) : undefined
    if (state.type === 'fulfilled') return stopError('memory', this.#input.limits)
    const info = this.#errorInfo(state.error)
    return this.#outOfMemory(info) ? stopError('memory', this.#input.limits) : { kind: 'exception', info }
  }

  /** An error returned by the engine outside the program's own promise (a job, an interrupt). */
  #noteEngineError(handle: QuickJSHandle): void {
    const info = this.#errorInfo(handle)
    handle.dispose()
    if (this.#outOfMemory(info)) this.#stop ??= stopError('memory', this.#input.limits)
  }

  #errorInfo(handle: QuickJSHandle): GuestErrorInfo {
    const ctx = this.#context()
    const read = (key: string): string | undefined => {
      try {
        const h = ctx.getProp(handle, key)
        const v = ctx.typeof(h) === 'string' ? ctx.getString(h) : undefined
        h.dispose()
        return v
      } catch {
        return undefined
      }
    }
    const name = read('name')
    const message = read('message')
    // Neither could be read: out of memory, reading a property can fail (each handle takes heap). An
    // anonymous description lets `#outOfMemory` call it the memory limit when the heap could not grow.
    if (name === undefined && message === undefined) return { message: UNFORMATTABLE }
    const info: GuestErrorInfo = { name: name ?? 'Error', message: message ?? '' }
    // As the prelude's `describe` does: no more of a message than the host could show leaves this thread.
    const maxChars = maxErrorChars(this.#input.limits.maxOutputBytes)
    if (info.message.length > maxChars) {
      info.cutChars = info.message.length - maxChars
      info.message = info.message.slice(0, maxChars)
    }
    const stack = read('stack')
    if (stack !== undefined) info.stack = stack
    return info
  }

  #trap(error: unknown): void {
    this.#broken = true
    const message = error instanceof Error ? error.message : String(error)
    this.#stop ??= /memory|OOM|enlarge/i.test(message)
      ? stopError('memory', this.#input.limits)
      : NATIVE_STACK_OVERFLOW.test(message)
        ? {
            kind: 'exception',
            message: `RangeError: ${message}: the program nests or recurses too deeply for the engine's native stack (this cannot be caught inside the program)`,
          }
        : { kind: 'crash', message: `the QuickJS engine failed: ${message}` }
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
      logs: this.#ledger.logs.slice(this.#logsSent),
      cpuMs: this.#cpuUsed,
      subCalls: this.#subCalls,
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
    const outcome = {
      logs: this.#ledger.logs.slice(this.#logsSent),
      cpuMs: this.#cpuUsed,
      subCalls: this.#subCalls,
      broken: this.#broken,
    }
    if (captured !== undefined && 'over' in captured) {
      const message = `the program waits on a parked call with ${captured.over} bytes of state, over the ${this.#input.durable?.maxBytes ?? 0}-byte budget of a suspended run (maxSessionBytes): it cannot suspend`
      this.#sink.done({ ...outcome, error: { kind: 'limit', message } })
    } else if (captured === undefined) {
      this.#sink.done({
        ...outcome,
        error: this.#stop ?? { kind: 'crash', message: 'the suspended run could not be captured' },
      })
    } else {
      this.#sink.done({ ...outcome, suspended: { memory: captured, outputBytes: this.#ledger.usedBytes } })
    }
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
        message: `the QuickJS engine failed: ${error instanceof Error ? error.message : String(error)}`,
      }
      return undefined
    }
  }
}

function isOutOfMemory(info: GuestErrorInfo): boolean {
  return info.name === 'InternalError' && /out of memory/i.test(info.message)
}
