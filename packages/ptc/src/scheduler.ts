import { setMaxListeners } from 'node:events'
import { ToolsError } from '@ptc/tools'
import {
  abandonedRefusal,
  abandonedResult,
  abandonReason,
  adoptParsedJson,
  countAbandoned,
  failureResult,
  isConcurrencySafeCall,
  whenAborted,
  type LogFailure,
  type ParsedToolCall,
} from '@ptc/tools/executor'
import { parkCall } from '@ptc/sandbox/session'
import type {
  ApprovalDecision,
  Agent,
  ImageBlock,
  JsonValue,
  ResolvedToolSet,
  ToolDefinition,
  ToolExecutionInput,
  ToolExecutionResult,
  ToolExecutorServices,
  ToolRunContext,
  ToolSchema,
} from '@ptc/tools'
import type { DispatchLog } from './dispatch-log.js'

/** A call's body was abandoned (+1) or, abandoned, has ended (-1); a call without a binding is not counted. */
function countCall(call: SubCall, change: 1 | -1): void {
  if (call.binding !== undefined) countAbandoned(call.binding.definition, change)
}

/** One tool a program may call: the definition it was bound to and its frozen schema. */
export interface Binding {
  readonly definition: ToolDefinition
  readonly schema: Readonly<ToolSchema>
}

interface SubCall {
  readonly subCallId: string
  readonly name: string
  readonly arguments: JsonValue
  /**
   * Undefined only for a hosted program's call of a name the scope cannot execute: the pipeline answers
   * it (`UNKNOWN_TOOL`), and it runs alone.
   */
  readonly binding: Binding | undefined
  /** A hosted program's call whose arguments could not be read: the pipeline fails it as `INVALID_ARGS`. */
  readonly argumentsError?: string
  /** The provider's id of a hosted program's call (logged with it). */
  readonly callId?: string
  /** The approval decided later for this call (a resumed program's parked call). */
  readonly decision?: ApprovalDecision
  /** Undefined until classified (see `exclusive`). */
  exclusive?: boolean
  result?: ToolExecutionResult
  settledAt?: number
  /**
   * It had not settled within the drain grace after it was told to stop (its
   * body's signal aborted mid-run, or the program ended): `result` is its
   * abandonment, and its body may still be running.
   */
  abandoned?: true
  /** Delivered to the program and logged (it left `#inFlight`). */
  committed?: true
  /** An abandoned call's own outcome that arrived before the abandonment was committed: logged right after it. */
  late?: { readonly result: ToolExecutionResult; readonly at: number }
  /** The grace armed when the body's signal aborted mid-run. */
  graceTimer?: ReturnType<typeof setTimeout>
  /** Hand the committed result to the caller; `abandoned`: the run stopped waiting and the result is the abandonment. */
  deliver(result: ToolExecutionResult, abandoned: boolean): void
}

/** How sub-call ids are numbered: `<parent call id>:ptc:<n>`, n counted on from `count` (a hosted program keeps it across batches). */
export interface SubCallNumbering {
  count: number
}

/** How one program's scheduler numbers, parks and bounds its calls. */
export interface SchedulerOptions {
  /** Default: a fresh count from 0. */
  readonly numbering?: SubCallNumbering
  /** Default: not durable. */
  readonly durable?: DurableCalls
  /** The longest JSON text of a call's value (`ToolDispatchOptions.maxValueChars`: a run's `maxResultChars`). */
  readonly maxValueChars?: number
  /** What the calls' images and deferred contexts may bring along with the result (`PtcExecutorOptions.maxForwardedChars`). */
  readonly maxForwardedChars?: number
}

/** The characters of an image block's JSON besides its data and MIME type (`{"type":"image","mimeType":"","data":""}`). */
const IMAGE_BLOCK_CHARS = 40

/** The length of `value`'s JSON text; infinite for one too deeply nested to write (it never fits). */
function jsonChars(value: unknown): number {
  try {
    return JSON.stringify(value).length
  } catch {
    return Number.POSITIVE_INFINITY
  }
}

/** `PtcExecutorOptions.maxForwardedChars` when not given: 8 Mi characters (about 6 MB of images). */
export const DEFAULT_MAX_FORWARDED_CHARS = 8 * 1024 * 1024

/** A durable program's scheduler (see `createPtcExecutor({ durable })`). */
export interface DurableCalls {
  /** A deferred approval parks the call (`parkCall`): the program suspends once it waits only on such calls. */
  readonly deferrable: boolean
  /** The decisions for the calls a resumed program makes again first (its parked calls), in order. */
  readonly decisions?: ApprovalDecision[]
}

/**
 * The calls waiting to start, first in first out. Not an array's `shift()`: past about 16 000 entries V8
 * moves every later entry on each one (an array that large cannot be trimmed in place), and a harness may
 * raise `maxPendingSubCalls` that far: a `Promise.all` of 20 000 calls spent a fifth of the run there.
 */
class Fifo<T> {
  #items: (T | undefined)[] = []
  #head = 0

  get first(): T | undefined {
    return this.#items[this.#head]
  }

  push(item: T): void {
    this.#items.push(item)
  }

  shift(): void {
    this.#items[this.#head++] = undefined
    if (this.#head === this.#items.length) {
      this.#items = []
      this.#head = 0
    } else if (this.#head >= 4096 && this.#head * 2 >= this.#items.length) {
      // Drop the spent half now and then: amortized, each entry is copied at most once more.
      this.#items = this.#items.slice(this.#head)
      this.#head = 0
    }
  }

  /** Every waiting entry, in order; the queue is left empty. */
  takeAll(): T[] {
    const all = this.#items.slice(this.#head) as T[]
    this.#items = []
    this.#head = 0
    return all
  }
}

/**
 * The per-run sub-dispatch scheduler. Calls start in submission order and are
 * classified when they start; concurrency-safe calls overlap up to the cap; an
 * exclusive call waits for everything before it to commit, runs alone and
 * holds the barrier through its own commit. Policy stages never overlap (the
 * next call starts only after the previous one's policy settled) and results
 * commit, to the program and to the log, in submission order.
 *
 * A call whose body was told to stop mid-run (a `tools/execute` wrapper's
 * signal aborted: the timeout policy's deadline passed) and that has not
 * settled `drainGraceMs` later is abandoned: the program receives a
 * `TOOL_TIMEOUT` (or `ABORTED`) rejection at its turn in submission order, its
 * settle event says `abandoned: true`, and its body's eventual outcome is
 * logged as `tool/ptc-dispatch-late`, never delivered. The pipeline still
 * awaits that body to its end. Consequence: an abandoned call leaves the
 * scheduler's accounting when it commits, so an abandoned exclusive call
 * releases the barrier and an abandoned safe call frees its parallel slot —
 * the calls after it run while its body may still be running (nothing can stop
 * a body that ignores its signal; the run's sub-call limit and wall still bound
 * how many such bodies a program can leave behind).
 */
export class SubCallScheduler {
  readonly #queue = new Fifo<SubCall>()
  /** Started, not yet committed, in start (= submission) order. */
  readonly #inFlight: SubCall[] = []
  readonly #run = new AbortController()
  #policyBusy = false
  #closed = false
  /** What the calls' contexts and images may still bring along (characters), of `#forwardMax`. */
  #forwardLeft: number
  readonly #forwardMax: number
  #leftOut = { images: 0, messages: 0 }
  #closing: Promise<LogFailure | undefined> | undefined
  #idle: (() => void) | undefined
  private readonly numbering: SubCallNumbering
  private readonly durable: DurableCalls
  private readonly maxValueChars: number | undefined

  constructor(
    private readonly services: ToolExecutorServices,
    private readonly ctx: ToolRunContext,
    private readonly bindings: ReadonlyMap<string, Binding>,
    private readonly maxParallel: number,
    private readonly log: DispatchLog,
    private readonly drainGraceMs: number,
    options: SchedulerOptions = {},
  ) {
    this.numbering = options.numbering ?? { count: 0 }
    this.durable = options.durable ?? { deferrable: false }
    this.maxValueChars = options.maxValueChars
    this.#forwardLeft = options.maxForwardedChars ?? DEFAULT_MAX_FORWARDED_CHARS
    this.#forwardMax = this.#forwardLeft
    // Every in-flight sub-call's body and wrappers may listen on the run signal: that is expected, not a leak.
    setMaxListeners(0, this.#run.signal)
    const outer = ctx.signal
    if (outer.aborted) this.#run.abort(outer.reason)
    else {
      const stopWaiting = whenAborted(outer, () => this.#run.abort(outer.reason))
      this.#run.signal.addEventListener('abort', stopWaiting, { once: true })
    }
  }

  /**
   * The host side of one guest call. Resolves with the canonical value or rejects with the failure
   * message. `args` is owned (the `CodeRunRequest.call` contract: a fresh parse of the guest's text,
   * for this call alone), so it is frozen in place: one frozen value serves classification, the
   * pipeline and the tool's own validation, with no copy.
   */
  submit(name: string, args: JsonValue): Promise<JsonValue> {
    const binding = this.bindings.get(name)
    if (this.#closed) return Promise.reject(new ToolsError('ABORTED', 'the program has ended'))
    if (binding === undefined) return Promise.reject(new ToolsError('UNKNOWN_TOOL', `unknown tool: ${name}`))
    const owned = adoptParsedJson(args)
    const decision = this.durable.decisions?.shift()
    const subCallId = this.#nextId()
    return new Promise<JsonValue>((resolve, reject) => {
      const deliver = (result: ToolExecutionResult, abandoned: boolean): void => {
        if (!abandoned) this.#forward(result)
        if (result.isError && this.durable.deferrable && result.error.info?.code === 'APPROVAL_DEFERRED') {
          const { reason, displayReason } = result.error.info
          reject(
            parkCall(
              {
                subCallId,
                ...(reason !== undefined && { reason }),
                ...(displayReason !== undefined && { displayReason }),
              },
              result.error.message,
            ),
          )
        } else if (result.isError) reject(subCallError(result.error.message, result.error.info?.code))
        else resolve(result.value)
      }
      this.#queue.push({
        subCallId,
        name,
        arguments: owned,
        binding,
        deliver,
        ...(decision !== undefined && { decision }),
      })
      this.#pump()
    })
  }

  /**
   * A hosted program's call (made by a provider's code execution): the same queue, pipeline and log as a
   * program's own, but the caller receives the whole result (content, contexts, conclusion) and nothing is
   * forwarded. A name the scope cannot execute and unreadable arguments go through the pipeline too, which
   * answers them, so every call the provider made is logged and answered. Never rejects.
   */
  dispatch(parsed: ParsedToolCall): Promise<ToolExecutionResult> {
    if (this.#closed) return Promise.resolve(failureResult('ABORTED', 'the batch ended before this call started'))
    const { call, args, argumentsError } = parsed
    return new Promise<ToolExecutionResult>((resolve) => {
      this.#queue.push({
        subCallId: this.#nextId(),
        name: call.name,
        arguments: argumentsError === undefined ? adoptParsedJson(args) : null,
        binding: argumentsError === undefined ? this.bindings.get(call.name) : undefined,
        ...(argumentsError !== undefined && { argumentsError }),
        callId: call.id,
        deliver: (result) => resolve(result),
      })
      this.#pump()
    })
  }

  #nextId(): string {
    return `${this.ctx.callId}:ptc:${++this.numbering.count}`
  }

  /**
   * The program ended: abort in-flight calls, abandon queued ones (no dispatch,
   * no events), and wait until every started call committed and was logged.
   * The wait is bounded: a call that has not settled `drainGraceMs` after the
   * abort (its body ignores its signal) is abandoned — its settle event is an
   * `isError` `TOOL_TIMEOUT` (`timedOut`: the run hit its wall) or `ABORTED`,
   * marked `abandoned: true` — while the pipeline keeps awaiting its body; the
   * body's eventual outcome is logged as `tool/ptc-dispatch-late`.
   * `ending` words why, in the messages of the calls it stops. Closing again
   * waits for the first close. Resolves the first event the session did not take, if any (the log's drain).
   */
  close(timedOut = false, ending = 'the program ended'): Promise<LogFailure | undefined> {
    this.#closing ??= this.#close(timedOut, ending)
    return this.#closing
  }

  async #close(timedOut: boolean, ending: string): Promise<LogFailure | undefined> {
    this.#closed = true
    this.#run.abort(new Error(ending))
    for (const call of this.#queue.takeAll())
      call.deliver(failureResult('ABORTED', `${ending} before this call started`), false)
    if (this.#inFlight.length > 0) {
      let timer: ReturnType<typeof setTimeout> | undefined
      await new Promise<void>((resolve) => {
        this.#idle = resolve
        timer = setTimeout(
          () => this.#abandon(timedOut ? 'TOOL_TIMEOUT' : 'ABORTED', timedOut ? 'the program timed out' : ending),
          this.drainGraceMs,
        )
      })
      clearTimeout(timer)
    }
    this.#noteLeftOut()
    return this.log.drain()
  }

  /** The drain grace is over: every started call that has not settled is abandoned, then all commit in order. */
  #abandon(code: 'TOOL_TIMEOUT' | 'ABORTED', ending: string): void {
    const now = Date.now()
    const what = `${ending} and the tool call was abandoned`
    for (const call of this.#inFlight) if (call.result === undefined) this.#abandonCall(call, code, what, now)
    this.#commit()
  }

  #pump(): void {
    // Once the run is told to stop (its caller aborted, or it ended), no queued call starts: `close` refuses
    // them, however the microtasks of the run's end and of a call settling meanwhile are ordered.
    while (!this.#closed && !this.#policyBusy && !this.#run.signal.aborted) {
      const head = this.#queue.first
      if (head === undefined) return
      // An exclusive call only starts alone and runs alone, and a call joins others only once they were all
      // classified safe: only a call in flight alone can be exclusive (a scan of every call in flight made a
      // Promise.all of n calls under a cap of n cost n²/2 checks).
      if (this.#inFlight.length === 1 && exclusive(this.#inFlight[0] as SubCall)) return
      if (
        head.binding !== undefined &&
        this.services.executable(head.name, this.ctx.agent, this.ctx.toolSet) !== head.binding.definition
      ) {
        this.#queue.shift()
        head.deliver(
          failureResult(
            'UNKNOWN_TOOL',
            `unknown tool: ${head.name} (it was removed, replaced or restricted after the program started)`,
          ),
          false,
        )
        continue
      }
      const refusal = abandonedRefusal(head.binding?.definition, head.name)
      if (refusal !== undefined) {
        this.#queue.shift()
        head.deliver(refusal, false)
        continue
      }
      // A call that starts alone needs no classification yet; it is classified when another call wants to overlap it.
      if (this.#inFlight.length > 0 && (exclusive(head) || this.#inFlight.length >= this.maxParallel)) return
      this.#queue.shift()
      this.#start(head)
    }
  }

  #start(call: SubCall): void {
    this.#inFlight.push(call)
    this.#policyBusy = true
    this.log.started(call)
    void this.services
      .dispatch(
        {
          callId: call.subCallId,
          rootCallId: this.ctx.rootCallId,
          name: call.name,
          arguments: call.arguments,
          ...(call.binding !== undefined && { schema: call.binding.schema }),
          parent: this.ctx.token,
          signal: this.#run.signal,
          ...this.#scope(),
        },
        {
          ...(call.argumentsError !== undefined && { argumentsError: call.argumentsError }),
          onPolicySettled: () => {
            this.#policyBusy = false
            this.#pump()
          },
          onBodyAborted: (reason) => this.#bodyAborted(call, reason),
          ...(this.durable.deferrable && { deferrable: true }),
          ...(this.maxValueChars !== undefined && { maxValueChars: this.maxValueChars }),
          ...(call.decision !== undefined && { decision: call.decision }),
        },
      )
      .then((result) => {
        clearTimeout(call.graceTimer)
        // An abandoned call's late outcome is logged (after its abandonment), never delivered.
        if (call.abandoned === true) {
          countCall(call, -1)
          if (call.committed === true) this.log.late(call, result, Date.now())
          else call.late = { result, at: Date.now() }
          return
        }
        call.result = result
        call.settledAt = Date.now()
        this.#commit()
      })
  }

  /**
   * The body's signal aborted while it ran (only reported when a `tools/execute`
   * wrapper replaced it, e.g. the timeout policy). Mid-run, the call gets
   * `drainGraceMs` to settle before it is abandoned. An abort of the run
   * itself (program end, caller abort) is `close()`'s to bound.
   */
  #bodyAborted(call: SubCall, reason: unknown): void {
    if (this.#closed || this.#run.signal.aborted || call.result !== undefined || call.graceTimer !== undefined) return
    const { code, what } = abandonReason(reason)
    call.graceTimer = setTimeout(() => {
      if (call.result !== undefined) return
      this.#abandonCall(call, code, what, Date.now())
      this.#commit()
    }, this.drainGraceMs)
  }

  #abandonCall(call: SubCall, code: 'TOOL_TIMEOUT' | 'ABORTED', what: string, now: number): void {
    call.result = abandonedResult(code, what, this.drainGraceMs)
    call.abandoned = true
    call.settledAt = now
    countCall(call, 1)
  }

  /** Deliver settled calls to the program and the log, in submission order. */
  #commit(): void {
    while (this.#inFlight[0]?.result !== undefined) {
      const call = this.#inFlight.shift() as SubCall
      const result = call.result as ToolExecutionResult
      call.committed = true
      clearTimeout(call.graceTimer)
      this.log.settled(call, result, call.settledAt ?? Date.now(), call.abandoned === true)
      if (call.late !== undefined) this.log.late(call, call.late.result, call.late.at)
      call.deliver(result, call.abandoned === true)
    }
    if (this.#inFlight.length === 0) this.#idle?.()
    this.#pump()
  }

  /**
   * Deferred contexts, image content and a concluding success travel with the run_code result: the contexts and
   * images up to `maxForwardedChars` in all (each whole or not at all; 25 images of 9 MB went to the model with
   * a result whose text was `done`), what did not fit said in one note at the end (`close`).
   */
  #forward(result: ToolExecutionResult): void {
    for (const context of result.additionalContexts ?? []) {
      if (this.#fits(jsonChars(context))) this.ctx.deferContext(context)
      else this.#leftOut.messages++
    }
    // Each block counts its JSON around the data too: 200 000 empty images counted nothing, and went to the client.
    const images = result.content.filter(
      (b): b is ImageBlock =>
        b.type === 'image' &&
        (this.#fits(IMAGE_BLOCK_CHARS + b.data.length + b.mimeType.length) || (this.#leftOut.images++, false)),
    )
    if (images.length > 0) this.ctx.deferContext({ role: 'user', content: images })
    if (!result.isError && result.concludesTurn === true) this.ctx.concludeTurn()
  }

  /** Whether `chars` more fit in what the calls may still bring along; they are counted if so. */
  #fits(chars: number): boolean {
    if (chars > this.#forwardLeft) return false
    this.#forwardLeft -= chars
    return true
  }

  /** The note on the contexts and images `#forward` left out, once. */
  #noteLeftOut(): void {
    const { images, messages } = this.#leftOut
    if (images + messages === 0) return
    this.#leftOut = { images: 0, messages: 0 }
    const parts = [
      images > 0 && `${images} image${images === 1 ? '' : 's'}`,
      messages > 0 && `${messages} message${messages === 1 ? '' : 's'}`,
    ]
      .filter(Boolean)
      .join(' and ')
    const text = `[ptc: ${parts} that the program's tool calls returned ${images + messages === 1 ? 'was' : 'were'} left out: they would have taken what a run_code result brings along past ${this.#forwardMax} characters (maxForwardedChars)]`
    this.ctx.deferContext({ role: 'user', content: [{ type: 'text', text }] })
  }

  #scope(): Pick<ToolExecutionInput, 'agent' | 'toolSet'> {
    const scope: { agent?: Agent; toolSet?: ResolvedToolSet } = {}
    if (this.ctx.agent !== undefined) scope.agent = this.ctx.agent
    if (this.ctx.toolSet !== undefined) scope.toolSet = this.ctx.toolSet
    return scope
  }
}

/**
 * Whether a call must run alone: only an exact `true` from the classifier of
 * the definition it was bound to (and checked against at start) is parallel; a
 * throw or anything else is exclusive, and so is a call without a binding. The
 * classifier is pure, so evaluating it when first needed gives what it gave at start.
 */
function exclusive(call: SubCall): boolean {
  call.exclusive ??= call.binding === undefined || !isConcurrencySafeCall(call.binding.definition, call.arguments)
  return call.exclusive
}

/**
 * The rejection a program sees for a failed sub-call: the pipeline's message and its stable code
 * (`DENIED`, `TOOL_TIMEOUT`, …; `TOOL_ERROR` when the failure has none), which the sandbox carries
 * into the guest's `ToolCallError.code`.
 */
function subCallError(message: string, code: string | undefined): Error {
  return Object.assign(new Error(message), { code: code ?? 'TOOL_ERROR' })
}
