import { formatViolations } from '../errors.js'
import type { JsonValue } from '../json/types.js'
import { _snapshotOnce, type SnapshotOnceResult } from '../json/snapshot.js'
import type { Registration } from '../registry/registration.js'
import type { PostToolDecision } from '../types/decisions.js'
import type { ToolExecution, ToolExecutionResult } from '../types/tool.js'
import { contentProblem, contentText, failureResult, thrownResult } from './results.js'

const MAX_VIOLATIONS_SHOWN = 20

/** Snapshot, validate and render a body's return value. */
export function produceValue(
  reg: Registration,
  exec: ToolExecution,
  raw: unknown,
  concludesTurn: boolean,
  maxValueChars?: number,
): ToolExecutionResult {
  const snap = _snapshotOnce(raw, maxValueChars)
  if (!snap.ok) return refused(snap, `tool ${exec.name} returned a value`)
  return renderValue(reg, exec, snap.value, concludesTurn)
}

/** The `INVALID_TOOL_OUTPUT` failure for a value its snapshot refused: not lossless JSON, or too long. */
function refused(snap: Exclude<SnapshotOnceResult, { ok: true }>, what: string): ToolExecutionResult {
  if ('tooLong' in snap) return failureResult('INVALID_TOOL_OUTPUT', `${what} too long to take: ${snap.message}`)
  return failureResult('INVALID_TOOL_OUTPUT', `${what} that is not lossless JSON: ${snap.message}`)
}

/** Validate a (frozen, lossless) value against the output schema, then render it and its presentation meta. */
export function renderValue(
  reg: Registration,
  exec: ToolExecution,
  value: JsonValue,
  concludesTurn: boolean,
): ToolExecutionResult {
  const violations = reg.output.validate(value)
  if (violations.length > 0) {
    const shown = formatViolations(violations.slice(0, MAX_VIOLATIONS_SHOWN))
    const more =
      violations.length > MAX_VIOLATIONS_SHOWN ? ` (and ${violations.length - MAX_VIOLATIONS_SHOWN} more)` : ''
    return failureResult(
      'INVALID_TOOL_OUTPUT',
      `tool ${exec.name} returned a value that does not match its output schema: ${shown}${more}`,
    )
  }
  const output = reg.definition.output
  let content
  try {
    content = output.render(exec.arguments, value)
  } catch (error) {
    return thrownResult(error, `the renderer of ${exec.name} failed: `)
  }
  let meta: JsonValue | undefined
  // Sub-calls too: `tool/ptc-dispatch` stores it, so a replay can rebuild their cards.
  if (output.presentationMeta !== undefined) {
    try {
      meta = output.presentationMeta(exec.arguments, value)
    } catch (error) {
      return thrownResult(error, `the presentationMeta of ${exec.name} failed: `)
    }
  }
  return {
    isError: false,
    value,
    content,
    ...(meta !== undefined && { meta }),
    ...(concludesTurn && { concludesTurn: true }),
  }
}

/**
 * A result a `tools/execute` wrapper returned instead of (or after) the body's:
 * checked for shape, and a success's value is revalidated and re-rendered.
 */
export function normalizeWrapped(
  reg: Registration,
  exec: ToolExecution,
  wrapped: unknown,
  maxValueChars?: number,
): ToolExecutionResult {
  if (typeof wrapped !== 'object' || wrapped === null)
    return failureResult('TOOL_ERROR', 'a tools/execute wrapper returned something that is not a result')
  const w = wrapped as Partial<Record<keyof ToolExecutionResult, unknown>>
  if (w.isError === true) {
    const error = w.error as { message?: unknown } | undefined
    if (typeof error !== 'object' || error === null || typeof error.message !== 'string') {
      return failureResult('TOOL_ERROR', 'a tools/execute wrapper returned a failure without `error.message`')
    }
    return wrapped as ToolExecutionResult
  }
  if (w.isError !== false)
    return failureResult('TOOL_ERROR', 'a tools/execute wrapper returned a result without a boolean `isError`')
  const snap = _snapshotOnce(w.value, maxValueChars)
  if (!snap.ok) return refused(snap, 'a tools/execute wrapper returned a value')
  return renderValue(reg, exec, snap.value, w.concludesTurn === true)
}

/** Apply a post-execute decision: accept, replace content or value (never both), or block. */
export function applyPostDecision(
  reg: Registration,
  exec: ToolExecution,
  result: ToolExecutionResult,
  decision: PostToolDecision,
  maxValueChars?: number,
): ToolExecutionResult {
  if (typeof decision !== 'object' || decision === null) {
    return failureResult('TOOL_ERROR', 'a tools/post-execute listener returned something that is not a decision')
  }
  const contexts = [...(result.additionalContexts ?? []), ...(decision.additionalContexts ?? [])]
  const withContexts = (r: ToolExecutionResult): ToolExecutionResult =>
    contexts.length === 0 ? r : { ...r, additionalContexts: contexts }
  if (decision.kind === 'block') {
    const issue = contentProblem(decision.feedback)
    if (issue !== undefined)
      return failureResult('TOOL_ERROR', `a post-execute block decision has invalid feedback: ${issue}`)
    return withContexts({
      isError: true,
      error: { message: contentText(decision.feedback), info: { name: 'ToolBlockedError', code: 'DENIED' } },
      content: decision.feedback,
      ...(result.meta !== undefined && { meta: result.meta }),
    })
  }
  if (decision.kind !== 'accept')
    return failureResult('TOOL_ERROR', `a tools/post-execute listener returned an unknown decision kind`)
  const replacesContent = decision.content !== undefined
  const replacesValue = 'value' in decision && decision.value !== undefined
  if (replacesContent && replacesValue) {
    return failureResult('TOOL_ERROR', 'a tools/post-execute decision may replace content or value, never both')
  }
  if (replacesValue) {
    const snap = _snapshotOnce(decision.value, maxValueChars)
    if (!snap.ok) return refused(snap, 'a tools/post-execute listener replaced the value with one')
    return withContexts(renderValue(reg, exec, snap.value, !result.isError && result.concludesTurn === true))
  }
  if (replacesContent) return withContexts({ ...result, content: decision.content } as ToolExecutionResult)
  return withContexts(result)
}
