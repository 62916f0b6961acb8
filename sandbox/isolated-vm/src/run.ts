import { FinishKind, GUEST_LOG_LEVELS, OutputLedger, PROGRAM_FILENAME, formatGuestError, messageOf } from '@ptc/sandbox'
import type {
  CodeRunError,
  CodeRunLimits,
  CodeRunRequest,
  CodeRunResult,
  GuestErrorInfo,
  JsonValue,
  PreparedProgram,
} from '@ptc/sandbox'
import type IsolatedVM from 'isolated-vm'
import { HostBridge } from './bridge.js'
import type { IsolateSlot, SlotHandler } from './slot.js'
import { syntaxErrorInfo } from './guest-error.js'
import { stopError } from './stop.js'
import type { StopReason } from './stop.js'

/** How often the heap backstop samples the isolate between guest tasks. */
const MEMORY_POLL_MS = 50

/**
 * One run in one isolate. Guest code runs only inside isolated-vm tasks the host starts (`start`,
 * then one `settle` per batch of results) on the isolate's own thread; the guest talks back through
 * three ignored-result callbacks carrying only numbers and strings. The host enforces every limit:
 * a CPU watchdog reading `isolate.cpuTime`, a wall timer, a heap backstop, the output ledger and
 * the sub-call caps; any stop disposes the isolate, which kills the guest wherever it is.
 */
export class IsolateRun implements SlotHandler {
  readonly result: Promise<CodeRunResult>
  readonly #limits: CodeRunLimits
  readonly #program: PreparedProgram
  readonly #bindingsJson: string
  readonly #request: CodeRunRequest
  readonly #ledger: OutputLedger
  readonly #bridge: HostBridge
  readonly #t0 = performance.now()
  #resolve!: (result: CodeRunResult) => void
  #slot: IsolateSlot | undefined
  #ended = false
  #tasks = 0
  #cpuBase: bigint | undefined
  #cpuEnd = 0
  #wallTimer: ReturnType<typeof setTimeout> | undefined
  #cpuTimer: ReturnType<typeof setTimeout> | undefined
  #heapPoll: ReturnType<typeof setInterval> | undefined
  #heapInFlight = false
  readonly #onAbort = (): void => this.stop('abort')

  constructor(request: CodeRunRequest, limits: CodeRunLimits, program: PreparedProgram, bindingsJson: string) {
    this.#request = request
    this.#limits = limits
    this.#program = program
    this.#bindingsJson = bindingsJson
    this.#ledger = new OutputLedger(limits.maxOutputBytes)
    this.#bridge = new HostBridge(request, limits, {
      deliver: (batchJson) => this.#settle(batchJson),
      stop: (reason) => this.stop(reason),
    })
    this.result = new Promise((resolve) => (this.#resolve = resolve))
    if (request.signal?.aborted) this.stop('abort')
    else request.signal?.addEventListener('abort', this.#onAbort, { once: true })
    if (!this.#ended) this.#wallTimer = setTimeout(() => this.stop('wall'), limits.wallMs)
  }

  get ended(): boolean {
    return this.#ended
  }

  /** Takes the slot (when it is ready), installs the prelude, compiles and starts the program. */
  async begin(acquire: Promise<IsolateSlot>): Promise<void> {
    let slot: IsolateSlot
    try {
      slot = await acquire
    } catch (error) {
      this.#finish({ kind: 'crash', message: `could not create an isolate: ${messageOf(error)}` })
      return
    }
    if (this.#ended) {
      slot.dispose()
      return
    }
    this.#slot = slot
    slot.handler = this
    let start: IsolatedVM.Reference<(fn: unknown) => void>
    let script: IsolatedVM.Script
    try {
      // Trusted code on an idle isolate: synchronous, bounded by the number of bindings.
      start = slot.setup.applySync(undefined, [this.#bindingsJson, this.#limits.maxOutputBytes, this.#limits.maxSubCalls], {
        result: { reference: true },
      }) as IsolatedVM.Reference<(fn: unknown) => void>
      this.#bridge.attach(slot.settle)
    } catch (error) {
      this.#engineFailure(error)
      return
    }
    try {
      // Compiling only parses (no program code runs): safe on this thread.
      script = slot.isolate.compileScriptSync(this.#program.source, { filename: PROGRAM_FILENAME })
    } catch (error) {
      this.#finish({ kind: 'syntax', message: formatGuestError(syntaxErrorInfo(error), this.#program) })
      return
    }
    this.#cpuBase = slot.isolate.cpuTime
    this.#armCpu(this.#limits.cpuMs)
    this.#heapPoll = setInterval(() => this.#pollHeap(), MEMORY_POLL_MS)
    this.#tasks++
    try {
      // Evaluating the wrapper only creates the function, but the text is the model's: run it on the
      // isolate's thread like everything else the model wrote.
      const fn = await script.run(slot.context, { reference: true, release: true })
      if (!this.#ended) await start.apply(undefined, [fn.derefInto({ release: true })])
    } catch (error) {
      this.#engineFailure(error)
    } finally {
      this.#tasks--
      this.#checkIdle()
    }
  }

  /** Ends the run from the host side: disposes the isolate (killing the guest), settles the result. */
  stop(reason: StopReason): void {
    if (this.#ended) return
    this.#finish(stopError(reason, this.#limits, this.#ledger))
  }

  // ---- SlotHandler: what the guest sends (untrusted arguments) ----

  onCall(id: unknown, name: unknown, argsJson: unknown): void {
    if (this.#ended) return
    if (typeof id !== 'number' || typeof name !== 'string' || typeof argsJson !== 'string') {
      this.#finish({ kind: 'crash', message: 'the guest sent a malformed sub-call' })
      return
    }
    this.#bridge.dispatch(id, name, argsJson)
  }

  onLog(level: unknown, text: unknown): void {
    if (this.#ended) return
    if (typeof text !== 'string' || !GUEST_LOG_LEVELS.includes(level as (typeof GUEST_LOG_LEVELS)[number])) return
    if (!this.#ledger.log(text)) this.stop('output')
  }

  onFinish(kind: unknown, payload: unknown): void {
    if (this.#ended) return
    const text = typeof payload === 'string' ? payload : ''
    switch (kind) {
      case FinishKind.Undefined:
        this.#finish(undefined)
        return
      case FinishKind.Value:
        if (!this.#ledger.value(text)) this.#finish({ kind: 'output-limit', message: this.#ledger.describeOverflow('value') })
        else this.#finish(undefined, JSON.parse(text) as JsonValue)
        return
      case FinishKind.InvalidValue:
        this.#finish({ kind: 'invalid-output', message: `the return value is not lossless JSON: ${text}` })
        return
      case FinishKind.Error: {
        let info: GuestErrorInfo
        try {
          info = JSON.parse(text) as GuestErrorInfo
        } catch {
          info = { message: 'unreadable error' }
        }
        // isolated-vm's allocator refuses ArrayBuffers past the isolate's limit with this RangeError.
        if (info.name === 'RangeError' && /^Array buffer allocation failed/.test(info.message)) this.stop('memory')
        else this.#finish({ kind: 'exception', message: formatGuestError(info, this.#program) })
        return
      }
      default:
        this.#finish({ kind: 'crash', message: 'the guest sent a malformed completion' })
    }
  }

  onCatastrophe(message: string): void {
    this.#finish({ kind: 'crash', message: `isolated-vm lost control of the isolate: ${message}` })
  }

  // ---- internals ----

  #settle(batchJson: string): void {
    const settle = this.#bridge.settleRef
    if (this.#ended || settle === undefined) return
    this.#tasks++
    settle.apply(undefined, [batchJson]).then(
      () => {
        this.#tasks--
        this.#checkIdle()
      },
      (error: unknown) => {
        this.#tasks--
        this.#engineFailure(error)
      },
    )
  }

  /** No guest task running, nothing pending on the host: nothing can ever wake the guest again. */
  #checkIdle(): void {
    if (this.#ended || this.#tasks > 0 || this.#cpuBase === undefined || !this.#bridge.idle) return
    this.stop('stuck')
  }

  #cpuMs(): number {
    const slot = this.#slot
    if (slot === undefined || this.#cpuBase === undefined || slot.disposed) return this.#cpuEnd
    try {
      this.#cpuEnd = Number(slot.isolate.cpuTime - this.#cpuBase) / 1e6
    } catch {
      // Disposed meanwhile: keep the last reading.
    }
    return this.#cpuEnd
  }

  /** `timeout` only covers synchronous evaluation, so CPU is watched from here: re-armed for what is left. */
  #armCpu(delayMs: number): void {
    this.#cpuTimer = setTimeout(() => {
      if (this.#ended) return
      const used = this.#cpuMs()
      if (used >= this.#limits.cpuMs) this.stop('cpu')
      else this.#armCpu(Math.max(1, this.#limits.cpuMs - used))
    }, delayMs)
  }

  /** Backstop for isolated-vm's soft limit; statistics arrive between guest tasks. */
  #pollHeap(): void {
    const slot = this.#slot
    if (this.#heapInFlight || this.#ended || slot === undefined) return
    this.#heapInFlight = true
    slot.isolate.getHeapStatistics().then(
      (heap) => {
        this.#heapInFlight = false
        if (heap.used_heap_size + heap.externally_allocated_size > this.#limits.memoryBytes) this.stop('memory')
      },
      () => {
        this.#heapInFlight = false
      },
    )
  }

  /** An isolated-vm operation failed: the memory limit, a top-level throw, or a dead isolate. */
  #engineFailure(error: unknown): void {
    if (this.#ended) return
    const message = messageOf(error)
    if (/memory limit/i.test(message)) {
      this.stop('memory')
    } else if (this.#slot !== undefined && !this.#slot.disposed && error instanceof Error) {
      // A value thrown while the wrapper was evaluated (only possible if the code escapes the wrapper).
      this.#finish({ kind: 'exception', message: formatGuestError({ name: error.name, message, stack: error.stack ?? '' }, this.#program) })
    } else {
      this.#finish({ kind: 'crash', message: `the isolate died: ${message}` })
    }
  }

  #finish(error: CodeRunError | undefined, value?: JsonValue): void {
    if (this.#ended) return
    this.#ended = true
    const cpuMs = this.#cpuMs()
    clearTimeout(this.#wallTimer)
    clearTimeout(this.#cpuTimer)
    clearInterval(this.#heapPoll)
    this.#request.signal?.removeEventListener('abort', this.#onAbort)
    const slot = this.#slot
    if (slot !== undefined) {
      slot.handler = undefined
      // A program that completed can no longer reach the host (the prelude is closed and the
      // handler detached): free its isolate (~0.5-1 ms of teardown on this thread) after the
      // caller has its result. Anything else — a limit, an abort, a crash — is killed right now.
      if (error === undefined || error.kind === 'exception' || error.kind === 'invalid-output') setImmediate(() => slot.dispose())
      else slot.dispose()
    }
    this.#bridge.close()
    const result: CodeRunResult = {
      logs: this.#ledger.logs,
      stats: {
        cpuMs: Math.round(cpuMs * 1000) / 1000,
        wallMs: Math.round((performance.now() - this.#t0) * 1000) / 1000,
        queueMs: 0,
        subCalls: this.#bridge.subCalls,
      },
    }
    if (error !== undefined) result.error = error
    else if (value !== undefined) result.value = value
    this.#resolve(result)
  }
}
