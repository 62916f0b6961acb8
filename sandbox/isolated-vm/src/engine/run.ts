import type { GuestErrorInfo } from '@ptc/sandbox/backend'
import type IsolatedVM from 'isolated-vm'
import { messageOf, syntaxErrorInfo } from '../guest-error.js'
import { FINISH_ERROR } from './protocol.js'
import type { EngineFailure, FromEngine, StartInput } from './protocol.js'
import { RunMeter } from './run-meter.js'
import { memoryLimitMib, type IsolateSlot, type SlotHandler } from './slot.js'
import { isolateDied, noIsolate } from '../messages.js'

/**
 * The engine side of one run in one isolate. Guest code runs only inside isolated-vm tasks this
 * class starts (`start`, then one `settle` per batch of results) on the isolate's own thread; the
 * guest talks back through three ignored-result callbacks, forwarded to the host as they come. Here
 * live the limits only the isolate's process can watch: the CPU watchdog and the heap backstop
 * (`RunMeter`), and isolated-vm's own memory limit. Every end disposes the isolate, except the
 * clean end of a session run (see `#keeps`); `ended` is sent once no task of this run is left running,
 * which is the host's proof that the run uses no more CPU (a long built-in ignores the disposal: then
 * `ended` never comes, and the host kills the process).
 */
export class EngineRun implements SlotHandler {
  readonly id: number
  readonly #input: StartInput
  readonly #programFilename: string
  readonly #send: (message: FromEngine) => void
  readonly #onEnded: (kept: IsolateSlot | undefined) => void
  #slot: IsolateSlot | undefined
  #settle: IsolatedVM.Reference<(batchJson: string) => void> | undefined
  /** The run reached an outcome (sent or asked by the host): nothing more is forwarded. */
  #done = false
  #endedSent = false
  #started = false
  #tasks = 0
  #settled = 0
  /** Sub-calls forwarded to the host, and results delivered back: equal when the guest awaits no call. */
  #calls = 0
  #results = 0
  /** The CPU watchdog and heap backstop, once the program starts. */
  #meter: RunMeter | undefined
  /** A finish waiting for `#decide`: a guest RangeError, or any end of a run its isolate's limit does not bound. */
  #pendingFinish: { kind: unknown; payload: unknown; cpuMs: number; overLimit: boolean } | undefined
  /** The program completed, threw or did not compile: its isolate's state is one a program left. */
  #clean = false
  /** The host wants this session run's isolate disposed after all (`discard`, `stop`). */
  #discard = false
  /** A session run's isolate waits for the run's last task to end, to be kept. */
  #parking = false
  #parkTimer: ReturnType<typeof setTimeout> | undefined
  /** The run's isolate is a new one (not a session's kept isolate). */
  #fresh = true

  /** `onEnded` receives the isolate of a session run that is kept, else undefined. */
  constructor(
    id: number,
    input: StartInput,
    programFilename: string,
    send: (message: FromEngine) => void,
    onEnded: (kept: IsolateSlot | undefined) => void,
  ) {
    this.id = id
    this.#programFilename = programFilename
    this.#input = input
    this.#send = send
    this.#onEnded = onEnded
  }

  /**
   * Takes the slot (when it is ready), installs the prelude, compiles and starts the program.
   * `fresh`: false when the slot is a session's kept isolate (the prelude's per-run function is
   * called again in its context, and closes the previous run).
   */
  async begin(acquire: Promise<IsolateSlot>, fresh = true): Promise<void> {
    this.#fresh = fresh
    let slot: IsolateSlot
    try {
      slot = await acquire
    } catch (error) {
      this.#fail('crash', noIsolate(messageOf(error)))
      this.#checkEnded()
      return
    }
    if (this.#done) {
      slot.dispose()
      this.#checkEnded()
      return
    }
    this.#slot = slot
    slot.handler = this
    const { bindingsJson, maxOutputBytes, maxSubCalls, source } = this.#input
    let start: IsolatedVM.Reference<(fn: unknown) => void>
    let script: IsolatedVM.Script
    try {
      // Trusted code on an idle isolate: synchronous, bounded by the number of bindings.
      start = slot.setup.applySync(undefined, [bindingsJson, maxOutputBytes, maxSubCalls], {
        result: { reference: true },
      }) as IsolatedVM.Reference<(fn: unknown) => void>
      this.#settle = slot.settle
    } catch (error) {
      this.#engineFailure(error)
      this.#checkEnded()
      return
    }
    try {
      // Compiling only parses (no program code runs): safe on this thread.
      script = slot.isolate.compileScriptSync(source, { filename: this.#programFilename })
    } catch (error) {
      this.#clean = true
      this.#fail('syntax', JSON.stringify(syntaxErrorInfo(error, this.#programFilename)))
      this.#checkEnded()
      return
    }
    this.#meter = new RunMeter(slot, this.#input, {
      done: () => this.#done,
      over: (limit) => this.#fail(limit, ''),
      cpu: (cpuMs) => this.#send({ t: 'cpu', run: this.id, cpuMs }),
    })
    this.#tasks++
    try {
      // Evaluating the wrapper only creates the function, but the text is the model's: run it on the
      // isolate's thread like everything else the model wrote.
      const fn = await script.run(slot.context, { reference: true, release: true })
      if (!this.#done) {
        await start.apply(undefined, [fn.derefInto({ release: true })]).catch((error: unknown) => {
          if (!this.#unhandledRejection(error)) throw error
        })
      }
    } catch (error) {
      this.#engineFailure(error)
    } finally {
      this.#started = true
      this.#taskDone()
    }
  }

  /** Delivers a batch of host results into the guest (one isolated-vm task). */
  settle(batchJson: string, count: number): void {
    const settle = this.#settle
    if (this.#done || settle === undefined) return
    this.#results += count
    this.#tasks++
    settle.apply(undefined, [batchJson]).then(
      () => {
        this.#settled++
        this.#taskDone()
      },
      (error: unknown) => {
        this.#settled++
        if (!this.#unhandledRejection(error)) this.#engineFailure(error)
        this.#taskDone()
      },
    )
  }

  /**
   * isolated-vm ends a task by throwing the first promise rejection the guest left unhandled in it
   * (for example a sub-call the program fired and forgot, whose host call failed). The prelude's
   * `start` and `settle` never throw themselves (the program's own outcome reaches the host through
   * `finish`), so such a task that fails while its isolate is alive and not out of memory failed only
   * for that reason: the program goes on, as on QuickJS.
   */
  #unhandledRejection(error: unknown): boolean {
    const slot = this.#slot
    return slot !== undefined && !slot.disposed && !this.#done && !/memory limit|disposed/i.test(messageOf(error))
  }

  /** The host ended the run: kill the guest now (a session run's isolate is not kept). */
  stop(): void {
    this.discard()
    this.#end(true)
    this.#checkEnded()
  }

  /**
   * The host does not want this session run's isolate kept: it is disposed at the run's end (or now, if that
   * has come).
   */
  discard(): void {
    this.#discard = true
    if (this.#parking) this.#unpark()
  }

  // ---- SlotHandler: what the guest sends (untrusted arguments, forwarded as they are) ----

  onCall(id: unknown, name: unknown, argsJson: unknown): void {
    if (this.#done) return
    this.#calls++
    // A text the host would refuse (`maxArgumentChars`) does not cross to it: its length does.
    const args =
      typeof argsJson === 'string' && argsJson.length > this.#input.maxArgumentChars ? argsJson.length : argsJson
    this.#send({ t: 'call', run: this.id, id, name, args })
  }

  onLog(level: unknown, text: unknown): void {
    if (!this.#done) this.#send({ t: 'log', run: this.id, level, text })
  }

  onFinish(kind: unknown, payload: unknown): void {
    if (this.#done) return
    const rangeError = kind === FINISH_ERROR && typeof payload === 'string' && payload.includes('RangeError')
    if (this.#slot !== undefined && (rangeError || !this.#boundedBySlot(this.#slot))) {
      // V8 may throw "Invalid string length" (or array length) just before isolated-vm's soft limit
      // disposes the isolate over a bomb; and an isolate made for a larger run holds this one to its budget
      // only by measure: decide once the current task is over (see `#decide`).
      this.#pendingFinish = { kind, payload, cpuMs: this.#cpuMs(), overLimit: false }
      this.#end(true, false)
      if (this.#tasks === 0) this.#decide()
      return
    }
    this.#send({ t: 'finish', run: this.id, kind, payload, cpuMs: this.#cpuMs() })
    // The program completed: it can no longer reach the host (the prelude is closed, the handler
    // detached). Free the isolate after this message has left (a session's is kept instead).
    this.#clean = true
    this.#end(false)
  }

  onCatastrophe(message: string): void {
    // isolated-vm parks the isolate's thread for good: the host must end this process.
    this.#send({ t: 'catastrophe', run: this.id, message })
    this.#end(true)
  }

  // ---- internals ----

  #taskDone(): void {
    this.#tasks--
    if (this.#done) {
      if (this.#pendingFinish !== undefined && this.#tasks === 0) this.#decide()
      else this.#checkEnded()
      return
    }
    if (this.#tasks === 0 && this.#started && this.#calls === this.#results)
      this.#send({ t: 'idle', run: this.id, settled: this.#settled, cpuMs: this.#cpuMs() })
  }

  /**
   * The outcome of a pending finish, once no task runs: `memory` when isolated-vm hit its memory
   * limit meanwhile or the heap is over the run's budget, else the program's own end.
   */
  #decide(): void {
    const pending = this.#pendingFinish
    const slot = this.#slot
    if (pending === undefined || slot === undefined) return
    this.#pendingFinish = undefined
    const report = (memory: boolean): void => {
      if (memory) this.#send({ t: 'fail', run: this.id, reason: 'memory', detail: '', cpuMs: pending.cpuMs })
      else this.#send({ t: 'finish', run: this.id, kind: pending.kind, payload: pending.payload, cpuMs: pending.cpuMs })
      this.#clean = !memory
      this.#dispose(slot, true)
    }
    if (pending.overLimit || slot.disposed) {
      report(true)
      return
    }
    slot.isolate.getHeapStatistics().then(
      (heap) => report(heap.used_heap_size + heap.externally_allocated_size > this.#input.memoryBytes),
      () => report(true),
    )
  }

  #fail(reason: EngineFailure, detail: string): void {
    if (this.#done) return
    this.#send({ t: 'fail', run: this.id, reason, detail, cpuMs: this.#cpuMs() })
    this.#end(true)
  }

  /**
   * Stops forwarding and, unless `dispose` is false (the caller disposes later), disposes the
   * isolate (now, or after this macrotask when `now` is false).
   */
  #end(now: boolean, dispose = true): void {
    if (this.#done) return
    this.#cpuMs()
    this.#done = true
    this.#meter?.stop()
    const slot = this.#slot
    if (slot === undefined) return
    slot.handler = undefined
    if (dispose) this.#dispose(slot, now)
  }

  #dispose(slot: IsolateSlot, now: boolean): void {
    if (this.#keeps()) {
      this.#park()
      return
    }
    if (now) {
      slot.dispose()
      this.#checkEnded()
      return
    }
    setImmediate(() => {
      slot.dispose()
      this.#checkEnded()
    })
  }

  /**
   * Whether `slot`'s own memory limit bounds this run as a fresh isolate's would: not so for a session's isolate
   * made by a run with a larger `memoryBytes` (a limit cannot be lowered), which the heap is measured against.
   */
  #boundedBySlot(slot: IsolateSlot): boolean {
    return slot.memoryMib <= memoryLimitMib(this.#input.memoryBytes)
  }

  /** A session run that ended cleanly keeps its isolate for the session's next run, unless the host discarded it. */
  #keeps(): boolean {
    return this.#input.session !== undefined && this.#clean && !this.#discard
  }

  /**
   * Keeps the isolate once the run's last task has ended (`#checkEnded`). Jobs the program left may
   * still run in that task: if they are still running after `waitMs`, the isolate is disposed.
   */
  #park(): void {
    if (this.#parking) return
    this.#parking = true
    this.#parkTimer = setTimeout(() => this.#unpark(), this.#input.session?.waitMs ?? 0)
    this.#checkEnded()
  }

  /** The isolate waiting to be kept is disposed instead. */
  #unpark(): void {
    this.#parking = false
    clearTimeout(this.#parkTimer)
    this.#slot?.dispose()
    this.#checkEnded()
  }

  /**
   * `ended` once the run is over, its isolate disposed (or kept, idle: a session's) and none of its
   * tasks still running. A kept isolate's heap is measured here, on an idle isolate.
   */
  #checkEnded(): void {
    if (this.#endedSent || !this.#done || this.#tasks > 0) return
    const slot = this.#slot
    if (slot !== undefined && !slot.disposed && !this.#parking) return
    this.#endedSent = true
    clearTimeout(this.#parkTimer)
    let kept: number | undefined
    if (this.#parking && slot !== undefined && !slot.disposed) {
      try {
        const heap = slot.isolate.getHeapStatisticsSync()
        kept = heap.used_heap_size + heap.externally_allocated_size
      } catch {
        slot.dispose()
      }
    }
    this.#parking = false
    if (this.#input.session === undefined) this.#send({ t: 'ended', run: this.id })
    else this.#send({ t: 'ended', run: this.id, ...(kept === undefined ? {} : { kept }), fresh: this.#fresh })
    this.#onEnded(kept === undefined ? undefined : slot)
  }

  #cpuMs(): number {
    return this.#meter === undefined ? 0 : this.#meter.cpuMs()
  }

  /** An isolated-vm operation failed: the memory limit, a top-level throw, or a dead isolate. */
  #engineFailure(error: unknown): void {
    const message = messageOf(error)
    if (this.#done) {
      if (this.#pendingFinish !== undefined && /memory limit/i.test(message)) this.#pendingFinish.overLimit = true
      return
    }
    if (/memory limit/i.test(message)) {
      this.#fail('memory', '')
    } else if (this.#slot !== undefined && !this.#slot.disposed && error instanceof Error) {
      // A value thrown while the wrapper was evaluated (only possible if the code escapes the wrapper).
      const info: GuestErrorInfo = { name: error.name, message, stack: error.stack ?? '' }
      this.#fail('exception', JSON.stringify(info))
    } else {
      this.#fail('crash', isolateDied(message))
    }
  }
}
