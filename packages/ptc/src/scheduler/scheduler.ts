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
import { setMaxListeners } from 'node:events'
import { parkCall } from '@ptc/sandbox/session'
import {
  ToolsError,
  type Agent,
  type ApprovalDecision,
  type JsonValue,
  type ResolvedToolSet,
  type ToolExecutionInput,
  type ToolExecutionResult,
  type ToolExecutorServices,
  type ToolRunContext,
} from '@ptc/tools'
import {
  abandonedRefusal,
  abandonedResult,
  abandonReason,
  adoptParsedJson,
  failureResult,
  whenAborted,
  type LogFailure,
  type ParsedToolCall,
} from '@ptc/tools/executor'
import type { Binding } from '../bindings.js'
import type { DispatchLog } from '../dispatch-log.js'
import * as messages from '../messages.js'
import { Fifo } from './fifo.js'
import { DEFAULT_MAX_FORWARDED_CHARS, Forwarding } from './forwarding.js'
import { countCall, exclusive, subCallError, type SubCall, type SubCallNumbering } from './sub-call.js'

/** A durable program's scheduler (see `createPtcExecutor({ durable })`). */
export interface DurableCalls {
  /** A deferred approval parks the call (`parkCall`): the program suspends once it waits only on such calls. */
  readonly deferrable: boolean
  /** The decisions for the calls a resumed program makes again first (its parked calls), in order. */
  readonly decisions?: ApprovalDecision[]
}

/** One program's scheduler: whose calls it runs, through what, and how it numbers, parks and bounds them. */
export interface SchedulerOptions {
  readonly services: ToolExecutorServices
  /** The program's execution: the parent of its calls, which their contexts and conclusions go to. */
  readonly ctx: ToolRunContext
  readonly bindings: ReadonlyMap<string, Binding>
  /** Concurrency-safe calls that may overlap. */
  readonly maxParallel: number
  readonly log: DispatchLog
  /** How long a call told to stop may take to settle before it is abandoned. */
  readonly drainGraceMs: number
  /** Default: a fresh count from 0. */
  readonly numbering?: SubCallNumbering
  /** Default: not durable. */
  readonly durable?: DurableCalls
  /** The longest JSON text of a call's value (`ToolDispatchOptions.maxValueChars`: a run's `maxResultChars`). */
  readonly maxValueChars?: number
  /** What the calls' images and deferred contexts may bring along (`PtcExecutorOptions.maxForwardedChars`). */
  readonly maxForwardedChars?: number
}

export class SubCallScheduler {
  readonly #queue = new Fifo<SubCall>()
  /** Started, not yet committed, in start (= submission) order. */
  readonly #inFlight: SubCall[] = []
  readonly #run = new AbortController()
  #policyBusy = false
  #closed = false
  #closing: Promise<LogFailure | undefined> | undefined
  #idle: (() => void) | undefined
  readonly #services: ToolExecutorServices
  readonly #ctx: ToolRunContext
  readonly #bindings: ReadonlyMap<string, Binding>
  readonly #maxParallel: number
  readonly #log: DispatchLog
  readonly #drainGraceMs: number
  readonly #numbering: SubCallNumbering
  readonly #durable: DurableCalls
  readonly #maxValueChars: number | undefined
  readonly #forwarding: Forwarding

  constructor(options: SchedulerOptions) {
    const { ctx } = options
    this.#services = options.services
    this.#ctx = ctx
    this.#bindings = options.bindings
    this.#maxParallel = options.maxParallel
    this.#log = options.log
    this.#drainGraceMs = options.drainGraceMs
    this.#numbering = options.numbering ?? { count: 0 }
    this.#durable = options.durable ?? { deferrable: false }
    this.#maxValueChars = options.maxValueChars
    this.#forwarding = new Forwarding(ctx, options.maxForwardedChars ?? DEFAULT_MAX_FORWARDED_CHARS)
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
    const binding = this.#bindings.get(name)
    if (this.#closed) return Promise.reject(new ToolsError('ABORTED', messages.PROGRAM_HAS_ENDED))
    if (binding === undefined) return Promise.reject(new ToolsError('UNKNOWN_TOOL', messages.unknownTool(name)))
    const owned = adoptParsedJson(args)
    const decision = this.#durable.decisions?.shift()
    const subCallId = this.#nextId()
    return new Promise<JsonValue>((resolve, reject) => {
      const deliver = (result: ToolExecutionResult, abandoned: boolean): void => {
        if (!abandoned) this.#forwarding.forward(result)
        if (result.isError && this.#durable.deferrable && result.error.info?.code === 'APPROVAL_DEFERRED') {
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
    if (this.#closed) return Promise.resolve(failureResult('ABORTED', messages.BATCH_ENDED_FIRST))
    const { call, args, argumentsError } = parsed
    return new Promise<ToolExecutionResult>((resolve) => {
      this.#queue.push({
        subCallId: this.#nextId(),
        name: call.name,
        arguments: argumentsError === undefined ? adoptParsedJson(args) : null,
        binding: argumentsError === undefined ? this.#bindings.get(call.name) : undefined,
        ...(argumentsError !== undefined && { argumentsError }),
        callId: call.id,
        deliver: (result) => resolve(result),
      })
      this.#pump()
    })
  }

  #nextId(): string {
    return `${this.#ctx.callId}:ptc:${++this.#numbering.count}`
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
  close(timedOut = false, ending = messages.PROGRAM_ENDED): Promise<LogFailure | undefined> {
    this.#closing ??= this.#close(timedOut, ending)
    return this.#closing
  }

  async #close(timedOut: boolean, ending: string): Promise<LogFailure | undefined> {
    this.#closed = true
    this.#run.abort(new Error(ending))
    for (const call of this.#queue.takeAll()) call.deliver(failureResult('ABORTED', messages.notStarted(ending)), false)
    if (this.#inFlight.length > 0) {
      let timer: ReturnType<typeof setTimeout> | undefined
      await new Promise<void>((resolve) => {
        this.#idle = resolve
        timer = setTimeout(
          () => this.#abandon(timedOut ? 'TOOL_TIMEOUT' : 'ABORTED', timedOut ? messages.PROGRAM_TIMED_OUT : ending),
          this.#drainGraceMs,
        )
      })
      clearTimeout(timer)
    }
    this.#forwarding.noteLeftOut()
    return this.#log.drain()
  }

  /** The drain grace is over: every started call that has not settled is abandoned, then all commit in order. */
  #abandon(code: 'TOOL_TIMEOUT' | 'ABORTED', ending: string): void {
    const now = Date.now()
    const what = messages.abandonedAtEnd(ending)
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
      // classified safe: only a call in flight alone can be exclusive (no scan of every call in flight).
      if (this.#inFlight.length === 1 && exclusive(this.#inFlight[0] as SubCall)) return
      if (
        head.binding !== undefined &&
        this.#services.executable(head.name, this.#ctx.agent, this.#ctx.toolSet) !== head.binding.definition
      ) {
        this.#queue.shift()
        head.deliver(failureResult('UNKNOWN_TOOL', messages.toolGone(head.name)), false)
        continue
      }
      const refusal = abandonedRefusal(head.binding?.definition, head.name)
      if (refusal !== undefined) {
        this.#queue.shift()
        head.deliver(refusal, false)
        continue
      }
      // A call that starts alone needs no classification yet; it is classified when another call wants to overlap it.
      if (this.#inFlight.length > 0 && (exclusive(head) || this.#inFlight.length >= this.#maxParallel)) return
      this.#queue.shift()
      this.#start(head)
    }
  }

  #start(call: SubCall): void {
    this.#inFlight.push(call)
    this.#policyBusy = true
    this.#log.started(call)
    void this.#services
      .dispatch(
        {
          callId: call.subCallId,
          rootCallId: this.#ctx.rootCallId,
          name: call.name,
          arguments: call.arguments,
          ...(call.binding !== undefined && { schema: call.binding.schema }),
          parent: this.#ctx.token,
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
          ...(this.#durable.deferrable && { deferrable: true }),
          ...(this.#maxValueChars !== undefined && { maxValueChars: this.#maxValueChars }),
          ...(call.decision !== undefined && { decision: call.decision }),
        },
      )
      .then((result) => {
        clearTimeout(call.graceTimer)
        // An abandoned call's late outcome is logged (after its abandonment), never delivered.
        if (call.abandoned === true) {
          countCall(call, -1)
          if (call.committed === true) this.#log.late(call, result, Date.now())
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
    }, this.#drainGraceMs)
  }

  #abandonCall(call: SubCall, code: 'TOOL_TIMEOUT' | 'ABORTED', what: string, now: number): void {
    call.result = abandonedResult(code, what, this.#drainGraceMs)
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
      this.#log.settled(call, result, call.settledAt ?? Date.now(), call.abandoned === true)
      if (call.late !== undefined) this.#log.late(call, call.late.result, call.late.at)
      call.deliver(result, call.abandoned === true)
    }
    if (this.#inFlight.length === 0) this.#idle?.()
    this.#pump()
  }

  #scope(): Pick<ToolExecutionInput, 'agent' | 'toolSet'> {
    const scope: { agent?: Agent; toolSet?: ResolvedToolSet } = {}
    if (this.#ctx.agent !== undefined) scope.agent = this.#ctx.agent
    if (this.#ctx.toolSet !== undefined) scope.toolSet = this.#ctx.toolSet
    return scope
  }
}
