import { ToolsError } from '@ptc/tools'
import type { CodeRunFailureKind } from '@ptc/sandbox'

/** A `run_code` program failed; the model sees the kind, the message and the captured output. */
export class CodeRunFailedError extends ToolsError {
  readonly kind: CodeRunFailureKind
  readonly logs: readonly string[]
  constructor(kind: CodeRunFailureKind, message: string, logs: readonly string[]) {
    const captured = logs.length === 0 ? '(none)' : logs.join('\n')
    super('CODE_RUN_FAILED', `code run failed (${kind}): ${message}\nCaptured output:\n${captured}`)
    this.kind = kind
    this.logs = logs
  }
}

/** Why `ToolsService.resume` refused a token; nothing stored was changed then. */
export type ResumeErrorCode =
  | 'UNKNOWN_TOKEN'
  | 'STATE_REFUSED'
  | 'IN_PROGRESS'
  | 'BAD_DECISION'
  | 'WRONG_AGENT'
  | 'STORE_UNAVAILABLE'

/** `ToolsService.resume` could not continue a suspended program. */
export class ResumeError extends Error {
  readonly code: ResumeErrorCode
  constructor(code: ResumeErrorCode, message: string, options?: ErrorOptions) {
    super(message, options)
    this.code = code
    this.name = 'ResumeError'
  }
}
