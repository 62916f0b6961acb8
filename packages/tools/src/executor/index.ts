/**
 * `@ptc/tools/executor`: the kit for writing a `ToolExecutor` (the native executor and the PTC
 * transport of `@ptc/ptc` use it). A harness that installs executors needs none of it.
 *
 * - `adoptParsedJson`: take ownership of a value fresh from `JSON.parse` that nothing else references
 *   (freeze it in place instead of copying it). It checks nothing: anything else goes through
 *   `snapshotJson` from the root entry.
 * - `abandonReason` / `abandonedResult`: the wording and result of a call abandoned after the drain grace;
 *   `checkDrainGrace`: an executor's `drainGraceMs` option checked (or the default).
 * - `countAbandoned` / `abandonedRefusal` / `MAX_ABANDONED_BODIES`: abandoned bodies still running, per tool
 *   and process-wide, and the refusal of a call of a tool that has too many.
 * - `failureResult`: the `isError` result of a failure with its stable code.
 * - `parseToolCall`: a raw model call's arguments parsed losslessly, or why they could not be (`INVALID_ARGS`).
 * - `whenAborted`: wait for a caller's signal with one listener per signal, however many calls share it;
 *   `batchSignal`: a signal of its own that follows the caller's until released, on that one listener.
 * - `isConcurrencySafeCall`: the one rule that decides whether a call may overlap others.
 * - `reportLogFailure` / `takeLogFailure`: a call's events that an executor wrote to the agent's session
 *   itself and could not write, reported for the batch that returns that call (which then fails with
 *   `sessionLogFailed`, as a batch whose own log failed does).
 */
export { adoptParsedJson } from '../json/snapshot.js'
export { abandonedResult, abandonReason, checkDrainGrace } from './bounded.js'
export { abandonedRefusal, countAbandoned, MAX_ABANDONED_BODIES } from './abandoned.js'
export { isConcurrencySafeCall } from './classify.js'
export { failureResult } from '../pipeline/results.js'
export { parseToolCall, type ParsedToolCall } from './arguments.js'
export { batchSignal, whenAborted } from '../pipeline/signal.js'
export { reportLogFailure, sessionLogFailed, takeLogFailure, type LogFailure } from './log-failures.js'
