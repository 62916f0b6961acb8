import { describeThrown, ToolsError, type ToolErrorCode } from '../errors.js'
import type { JsonValue } from '../json/types.js'
import { _snapshotOnce } from '../json/snapshot.js'
import type { ContentBlock, UserMessage } from '../types/content.js'
import type { ToolErrorInfo, ToolExecutionFailure, ToolExecutionResult } from '../types/tool.js'

const errorNames: Record<ToolErrorCode, string> = {
  UNKNOWN_TOOL: 'ToolNotFoundError',
  INVALID_ARGS: 'ToolArgsError',
  INVALID_TOOL_OUTPUT: 'ToolOutputError',
  DENIED: 'ToolDeniedError',
  ABORTED: 'ToolAbortedError',
  ABORTED_BEFORE_DISPATCH: 'ToolAbortedError',
  TOOL_TIMEOUT: 'ToolTimeoutError',
  TOOL_ERROR: 'ToolExecutionError',
  CODE_RUN_FAILED: 'CodeRunFailedError',
  APPROVAL_DEFERRED: 'ToolApprovalDeferredError',
}

/** A failed result with `Error: <message>` text and `error.info {name, code}`. */
export function failureResult(code: ToolErrorCode, message: string, info?: ToolErrorInfo): ToolExecutionFailure {
  return {
    isError: true,
    error: { message, info: info ?? { name: errorNames[code], code } },
    content: [{ type: 'text', text: `Error: ${message}` }],
  }
}

const toolErrorCodes = new Set<string>(Object.keys(errorNames))

/** The failure for a thrown value: a ptc error keeps its code, anything else is `TOOL_ERROR`. */
export function thrownResult(thrown: unknown, prefix = ''): ToolExecutionFailure {
  const message = prefix + describeThrown(thrown)
  // Total: `instanceof` and the reads below run traps of a thrown Proxy (a revoked one throws).
  try {
    if (thrown instanceof ToolsError && toolErrorCodes.has(thrown.code)) {
      const { name, code } = thrown
      if (typeof name === 'string') return failureResult(code as ToolErrorCode, message, { name, code })
    }
  } catch {
    // Not one of ours in any readable way: a plain TOOL_ERROR.
  }
  return failureResult('TOOL_ERROR', message)
}

/** Content blocks are `text` or `image` with exactly their fields of the right types. */
export function contentProblem(content: unknown): string | undefined {
  if (!Array.isArray(content)) return 'content must be an array of content blocks'
  for (let i = 0; i < content.length; i++) {
    const block: unknown = content[i]
    if (typeof block !== 'object' || block === null) return `content[${i}] is not an object`
    const b = block as Record<string, unknown>
    if (b.type === 'text') {
      if (typeof b.text !== 'string') return `content[${i}].text must be a string`
    } else if (b.type === 'image') {
      if (typeof b.mimeType !== 'string' || typeof b.data !== 'string')
        return `content[${i}] image needs string mimeType and data`
    } else return `content[${i}].type must be "text" or "image"`
  }
  return undefined
}

function messageProblem(message: unknown): string | undefined {
  if (typeof message !== 'object' || message === null) return 'is not an object'
  const m = message as Record<string, unknown>
  if (m.role !== 'user') return 'role must be "user"'
  return contentProblem(m.content)
}

/**
 * Make a candidate result lossless and JSON-safe: content, error, contexts and
 * meta are snapshotted (deep-frozen); anything that cannot be is turned into a
 * JSON-safe `TOOL_ERROR` that keeps the same routing.
 */
export function materialize(result: ToolExecutionResult): ToolExecutionResult {
  const problem = (where: string, why: string): ToolExecutionResult =>
    failureResult('TOOL_ERROR', `tool result ${where} ${why}`)
  const content = _snapshotOnce(result.content)
  if (!content.ok) return problem('content', `is not lossless JSON: ${content.message}`)
  const contentIssue = contentProblem(content.value)
  if (contentIssue !== undefined) return problem('content', `is invalid: ${contentIssue}`)
  const out: Record<string, unknown> = { isError: result.isError, content: content.value }
  if (result.isError) {
    const error = _snapshotOnce(result.error)
    if (!error.ok) return problem('error', `is not lossless JSON: ${error.message}`)
    const e = error.value as { message?: unknown; info?: unknown } | null
    if (typeof e !== 'object' || e === null || typeof e.message !== 'string')
      return problem('error', 'must be { message, info? }')
    out.error = error.value
  } else {
    out.value = result.value
    if (result.concludesTurn === true) out.concludesTurn = true
  }
  if (result.meta !== undefined) {
    const meta = _snapshotOnce(result.meta)
    if (!meta.ok) return problem('meta', `is not lossless JSON: ${meta.message}`)
    out.meta = meta.value
  }
  if (result.additionalContexts !== undefined && result.additionalContexts.length > 0) {
    const contexts = _snapshotOnce(result.additionalContexts)
    if (!contexts.ok) return problem('additionalContexts', `are not lossless JSON: ${contexts.message}`)
    const list = contexts.value as JsonValue[]
    for (let i = 0; i < list.length; i++) {
      const issue = messageProblem(list[i])
      if (issue !== undefined) return problem('additionalContexts', `[${i}] ${issue}`)
    }
    out.additionalContexts = list as unknown as UserMessage[]
  }
  return Object.freeze(out) as unknown as ToolExecutionResult
}

/** Render text of a content list, for messages built from feedback blocks. */
export function contentText(content: readonly ContentBlock[]): string {
  return content.map((b) => (b.type === 'text' ? b.text : `[image ${b.mimeType}]`)).join('\n')
}
