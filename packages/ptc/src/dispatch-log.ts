import {
  SessionQueue,
  type ContentBlock,
  type JsonValue,
  type PtcDispatchLog,
  type Session,
  type SessionEvent,
  type ToolExecution,
  type ToolExecutionResult,
  type ToolExecutorServices,
} from '@ptc/tools'
import type { LogFailure } from '@ptc/tools/executor'
import { LogBudget, type LogLimits } from './log-limits.js'
import type { RunTrace } from './tracing.js'

/** A call a suspended program waits on, as `DispatchLog.suspended` records it. */
export interface AwaitedCall {
  readonly name: string
  readonly arguments: JsonValue
  readonly subCallId?: string
  readonly reason?: string
  readonly displayReason?: JsonValue
}

/** One sub-call's identity, as the log records it. */
export interface SubCallIdentity {
  readonly subCallId: string
  readonly name: string
  readonly arguments: JsonValue
  /** A hosted program's call: the provider's id of it (the batch result's `callId`). */
  readonly callId?: string
}

/**
 * The durable log of one run's sub-dispatches: `tool/ptc-dispatch-start`
 * when a call starts, `tool/ptc-dispatch` after it settled (its content
 * shaped by the `tools/ptc-dispatch-log` waterfall; `abandoned: true` when
 * the run stopped waiting for it), and `tool/ptc-dispatch-late` when an
 * abandoned call's body finally settled (during the run or after it). The
 * waterfall's input says which of the three it shapes (`settlement`). Appends
 * are chained in order and never awaited by the program; `drain()` waits for
 * all of them queued so far. Without a session nothing is written and the
 * waterfall does not run. Arguments and content are kept whole within `limits`
 * (`LogLimits`; `undefined`: always whole); past them an event keeps the value's
 * head and says what it left out in `elided: { arguments?, content? }`.
 */
export class DispatchLog {
  /** Undefined without a session: nothing is written and the waterfall does not run. */
  readonly #queue: SessionQueue | undefined
  readonly #budget: LogBudget
  /** The run's trace, told of the same moments as the log (see `tracing.ts`). */
  readonly #trace: RunTrace | undefined

  constructor(
    private readonly services: ToolExecutorServices,
    private readonly exec: ToolExecution,
    session: Session | undefined,
    limits: LogLimits | undefined,
    trace?: RunTrace,
  ) {
    this.#queue = session === undefined ? undefined : new SessionQueue(session)
    this.#budget = new LogBudget(limits)
    this.#trace = trace
  }

  /**
   * A hosted program seen for the first time: `tool/ptc-program {callId, name, code?, turn?, step?}`, the
   * parent its sub-dispatches are logged under (a `run_code` program's parent is its own `tool/call`).
   */
  program(
    caller: { readonly type: string; readonly code?: string },
    step: { readonly turn: number; readonly step: number } | undefined,
  ): void {
    this.#queue?.append({
      type: 'tool/ptc-program',
      time: Date.now(),
      callId: this.exec.callId,
      name: caller.type,
      ...(caller.code !== undefined && { code: caller.code }),
      ...step,
    })
  }

  started(call: SubCallIdentity): void {
    this.#trace?.callStarted(call)
    if (this.#queue === undefined) return
    // Fitted now, not when its turn to be written comes: a slow session must not keep large arguments alive.
    const { value, elided } = this.#budget.arguments(call.arguments)
    this.#queue.append({
      type: 'tool/ptc-dispatch-start',
      time: Date.now(),
      ...this.#ids(call),
      arguments: value,
      ...(elided !== undefined && { elided: { arguments: elided } }),
    })
  }

  /**
   * `settledAt`: when the dispatch settled (commits wait for earlier calls, so the log must not use commit time).
   * `abandoned`: the run stopped waiting for it; `result` is the abandonment.
   */
  settled(call: SubCallIdentity, result: ToolExecutionResult, settledAt: number, abandoned = false): void {
    this.#trace?.callSettled(call, result, abandoned)
    this.#append('tool/ptc-dispatch', call, result, settledAt, abandoned ? 'abandoned' : undefined)
  }

  /** The eventual outcome of an abandoned call: never delivered to the program, recorded here. */
  late(call: SubCallIdentity, result: ToolExecutionResult, settledAt: number): void {
    this.#trace?.callLate(call, result)
    this.#append('tool/ptc-dispatch-late', call, result, settledAt, 'late')
  }

  #append(
    type: string,
    call: SubCallIdentity,
    result: ToolExecutionResult,
    time: number,
    settlement: PtcDispatchLog['settlement'],
  ): void {
    this.#queue?.append(async (): Promise<SessionEvent> => {
      const shaped: ContentBlock[] = await this.services.ptcDispatchLog({
        exec: this.exec,
        subCallId: call.subCallId,
        name: call.name,
        isError: result.isError,
        content: result.content,
        ...(this.exec.agent !== undefined && { agent: this.exec.agent }),
        ...(settlement !== undefined && { settlement }),
      })
      const { content, elided } = this.#budget.content(shaped)
      return {
        type,
        time,
        ...this.#ids(call),
        isError: result.isError,
        content,
        ...(elided !== undefined && { elided: { content: elided } }),
        ...(result.error !== undefined && { error: result.error }),
        ...(result.meta !== undefined && { meta: result.meta }),
        ...(settlement === 'abandoned' && { abandoned: true }),
      }
    })
  }

  /**
   * The program suspended awaiting approval: `tool/ptc-suspend {rootCallId, parentCallId, token, awaiting}`
   * (`awaiting`: the calls it waits on, `{subCallId?, name, arguments, reason?, displayReason?}`, their
   * arguments fitted to the run's `limits` like a dispatch's, with `elided: { arguments }` past them).
   */
  suspended(token: string, awaiting: readonly AwaitedCall[]): void {
    this.#trace?.suspended(awaiting.map((call) => call.name))
    if (this.#queue === undefined) return
    const calls = awaiting.map((call): JsonValue => {
      const { value, elided } = this.#budget.arguments(call.arguments)
      return {
        ...call,
        arguments: value,
        ...(elided !== undefined && { elided: { arguments: elided } }),
      } as unknown as JsonValue
    })
    this.#queue.append({
      type: 'tool/ptc-suspend',
      time: Date.now(),
      rootCallId: this.exec.rootCallId,
      parentCallId: this.exec.callId,
      token,
      awaiting: calls,
    })
  }

  /**
   * A suspended program goes on: `tool/ptc-resume {rootCallId, parentCallId, token, decisions}`, written once
   * `wentOn` says it did (the events queued after it wait for that); not at all when the runtime refused it.
   */
  resumed(token: string, decisions: readonly string[], wentOn: Promise<boolean>): void {
    this.#trace?.resumed(decisions)
    const event: SessionEvent = {
      type: 'tool/ptc-resume',
      time: Date.now(),
      rootCallId: this.exec.rootCallId,
      parentCallId: this.exec.callId,
      token,
      decisions: [...decisions],
    }
    this.#queue?.append(async () => ((await wentOn) ? event : undefined))
  }

  /**
   * A resumed program's outcome, as its call's `tool/result` (marked `resumed: true`) under the harness's
   * turn and step of the resumption: the durable projection (content, error, meta), as the native log writes it.
   */
  resumedResult(result: ToolExecutionResult, step: { readonly turn: number; readonly step: number }): void {
    this.#queue?.append({
      type: 'tool/result',
      time: Date.now(),
      turn: step.turn,
      step: step.step,
      callId: this.exec.callId,
      name: this.exec.name,
      isError: result.isError,
      content: result.content,
      ...(result.error !== undefined && { error: result.error }),
      ...(result.meta !== undefined && { meta: result.meta }),
      resumed: true,
    })
  }

  /**
   * Every queued event written; the first failure, if any (a write that failed, or a session that did not
   * confirm in time). A failed write never fails the run: the batch that returns the call's outcome does
   * (`reportLogFailure` of `@ptc/tools/executor`).
   */
  async drain(): Promise<LogFailure | undefined> {
    return this.#queue?.drain()
  }

  #ids(call: SubCallIdentity): {
    rootCallId: string
    parentCallId: string
    subCallId: string
    name: string
    callId?: string
  } {
    const ids = {
      rootCallId: this.exec.rootCallId,
      parentCallId: this.exec.callId,
      subCallId: call.subCallId,
      name: call.name,
    }
    return call.callId === undefined ? ids : { ...ids, callId: call.callId }
  }
}
