import { ToolsError, ToolTimeoutError } from '../errors.js'
import { failureResult, materialize } from '../pipeline/results.js'
import type { ToolExecutionResult } from '../types/tool.js'
import type { ToolDispatchOptions } from '../types/executor.js'

/** The longest delay a platform timer accepts (a longer one fires at once). */
export const MAX_TIMER_MS = 2 ** 31 - 1

/** How long an executor waits, by default, for a call told to stop before abandoning it. */
export const DEFAULT_DRAIN_GRACE_MS = 100

/** The outcome an executor hands on: the dispatch's own, or its abandonment. */
export interface BoundedOutcome {
  readonly result: ToolExecutionResult
  /** The call had not settled within the grace after it was told to stop: `result` is the abandonment. */
  readonly abandoned: boolean
}

/**
 * One dispatch awaited with a bounded drain. Until the call is told to stop it
 * is awaited as long as it takes; from then on (`stop()`: the caller aborted,
 * or the signal a `tools/execute` wrapper gave its body aborted, e.g. the
 * timeout policy's deadline) it has `graceMs` to settle. One that has not
 * is abandoned: `onOutcome` gets an `isError` result (`TOOL_TIMEOUT` when the
 * stop was a timeout, otherwise `ABORTED`). The dispatch itself is never raced
 * for its outcome: the pipeline keeps awaiting the body to its end and its late
 * result goes to `onLate`. `onOutcome` is called exactly once. (Callbacks, not a
 * promise: this sits on every native call's path, and each promise hop costs.)
 */
export class BoundedDispatch {
  #done = false
  #timer: ReturnType<typeof setTimeout> | undefined

  constructor(
    dispatch: (options: Pick<ToolDispatchOptions, 'onBodyAborted'>) => Promise<ToolExecutionResult>,
    private readonly graceMs: number,
    private readonly onOutcome: (outcome: BoundedOutcome) => void,
    onLate: (result: ToolExecutionResult) => void,
  ) {
    void dispatch({ onBodyAborted: (reason) => this.stop(reason) }).then((result) => {
      if (this.#done) return onLate(result)
      clearTimeout(this.#timer)
      this.#done = true
      this.onOutcome({ result, abandoned: false })
    })
  }

  /** The call was told to stop (first call wins): arm the grace. */
  stop(reason: unknown): void {
    if (this.#done || this.#timer !== undefined) return
    const { code, what } = abandonReason(reason)
    this.#timer = setTimeout(() => {
      this.#done = true
      this.onOutcome({ result: abandonedResult(code, what, this.graceMs), abandoned: true })
    }, this.graceMs)
  }
}

/**
 * The settle of a call abandoned `graceMs` after it was told to stop: an `isError` result with
 * `code` and the message "<what>: it ignored its abort signal and had not settled <graceMs> ms later".
 */
export function abandonedResult(code: 'TOOL_TIMEOUT' | 'ABORTED', what: string, graceMs: number): ToolExecutionResult {
  return materialize(
    failureResult(code, `${what}: it ignored its abort signal and had not settled ${graceMs} ms later`),
  )
}

/**
 * The code and wording of a call abandoned after its body was told to stop for `reason`:
 * `TOOL_TIMEOUT` for a timeout (the timeout policy's budget named when known), else `ABORTED`.
 */
export function abandonReason(reason: unknown): { readonly code: 'TOOL_TIMEOUT' | 'ABORTED'; readonly what: string } {
  const timeout = timeoutOf(reason)
  if (timeout === undefined) return { code: 'ABORTED', what: 'the tool call was aborted and was abandoned' }
  return {
    code: 'TOOL_TIMEOUT',
    what:
      `tool call timed out${timeout.timeoutMs === undefined ? '' : ` after ${timeout.timeoutMs} ms`} and was ` +
      `abandoned`,
  }
}

/**
 * Whether an abort reason is a timeout (a `ToolsError` with code `TOOL_TIMEOUT`,
 * such as the timeout policy's `ToolTimeoutError`, which also gives its budget);
 * undefined for any other reason. Total: a hostile reason is not a timeout.
 */
function timeoutOf(reason: unknown): { readonly timeoutMs?: number } | undefined {
  try {
    if (reason instanceof ToolTimeoutError) return { timeoutMs: reason.timeoutMs }
    return reason instanceof ToolsError && reason.code === 'TOOL_TIMEOUT' ? {} : undefined
  } catch {
    return undefined
  }
}

/**
 * A drain grace as given to an executor (undefined: the default): a number of milliseconds from 0 to
 * `MAX_TIMER_MS`; a longer one would abandon every call at once, not wait longer.
 */
export function checkDrainGrace(graceMs: number | undefined): number {
  const grace = graceMs ?? DEFAULT_DRAIN_GRACE_MS
  if (typeof grace !== 'number' || !Number.isFinite(grace) || grace < 0)
    throw new TypeError('drainGraceMs must be a finite number of milliseconds >= 0')
  if (grace > MAX_TIMER_MS)
    throw new TypeError(`drainGraceMs must be at most ${MAX_TIMER_MS} ms (a timer's longest delay), not ${grace}`)
  return grace
}
