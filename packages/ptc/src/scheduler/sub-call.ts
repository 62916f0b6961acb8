/** One call a program made, as its scheduler tracks it from submission to commit. */
import type { ApprovalDecision, JsonValue, ToolExecutionResult } from '@ptc/tools'
import { countAbandoned, isConcurrencySafeCall } from '@ptc/tools/executor'
import type { Binding } from '../bindings.js'

export interface SubCall {
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
  /** Delivered to the program and logged (it left the scheduler's calls in flight). */
  committed?: true
  /** An abandoned call's own outcome that arrived before the abandonment was committed: logged right after it. */
  late?: { readonly result: ToolExecutionResult; readonly at: number }
  /** The grace armed when the body's signal aborted mid-run. */
  graceTimer?: ReturnType<typeof setTimeout>
  /**
   * Hand the committed result to the caller; `abandoned`: the run stopped waiting and the result is the
   * abandonment.
   */
  deliver(result: ToolExecutionResult, abandoned: boolean): void
}

/**
 * How sub-call ids are numbered: `<parent call id>:ptc:<n>`, n counted on from `count` (a hosted program keeps
 * it across batches, a resumed program numbers on from its suspension).
 */
export interface SubCallNumbering {
  count: number
}

/** A call's body was abandoned (+1) or, abandoned, has ended (-1); a call without a binding is not counted. */
export function countCall(call: SubCall, change: 1 | -1): void {
  if (call.binding !== undefined) countAbandoned(call.binding.definition, change)
}

/**
 * Whether a call must run alone: only an exact `true` from the classifier of
 * the definition it was bound to (and checked against at start) is parallel; a
 * throw or anything else is exclusive, and so is a call without a binding. The
 * classifier is pure, so evaluating it when first needed gives what it gave at start.
 */
export function exclusive(call: SubCall): boolean {
  call.exclusive ??= call.binding === undefined || !isConcurrencySafeCall(call.binding.definition, call.arguments)
  return call.exclusive
}

/**
 * The rejection a program sees for a failed sub-call: the pipeline's message and its stable code
 * (`DENIED`, `TOOL_TIMEOUT`, …; `TOOL_ERROR` when the failure has none), which the sandbox carries
 * into the guest's `ToolCallError.code`.
 */
export function subCallError(message: string, code: string | undefined): Error {
  return Object.assign(new Error(message), { code: code ?? 'TOOL_ERROR' })
}
