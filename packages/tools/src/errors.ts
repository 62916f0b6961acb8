import { textHead } from './presentation/text.js'

/**
 * Every error of `@ptc/tools`, each with a stable `code`. What crosses an
 * isolate or the session log is `{ name, code, message }`: match on `code`.
 */

/** Stable codes of failed tool calls. */
export type ToolErrorCode =
  | 'UNKNOWN_TOOL'
  | 'INVALID_ARGS'
  | 'INVALID_TOOL_OUTPUT'
  | 'DENIED'
  | 'ABORTED'
  | 'ABORTED_BEFORE_DISPATCH'
  | 'TOOL_TIMEOUT'
  | 'TOOL_ERROR'
  | 'CODE_RUN_FAILED'
  | 'APPROVAL_DEFERRED'

/** Codes of programming errors raised synchronously by the registry and schema compilers. */
export type ToolsUsageErrorCode =
  | 'INVALID_SCHEMA'
  | 'INVALID_REGISTRATION'
  | 'INVALID_RESTRICTION'
  | 'NOT_JSON'
  | 'BATCH_FAILED'
  | 'NO_EXECUTOR'
  | SessionErrorCode

const brand = Symbol.for('@ptc/tools.error')

/** Base class: a stable `code`, a `name` equal to the class name, `cause` when wrapping. */
export class ToolsError extends Error {
  readonly code: ToolErrorCode | ToolsUsageErrorCode
  constructor(code: ToolErrorCode | ToolsUsageErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.code = code
    this.name = new.target.name
  }
  get [brand](): true {
    return true
  }
}

// `instanceof ToolsError` reads the brand, so it works across module copies (a bundled and a source build); a
// subclass uses the ordinary prototype check. Never throws: a value whose traps throw (a hostile or revoked
// Proxy) is not an instance. Installed outside the class body: a bundler renames a class that names itself
// in its body, and every error's `name` became `_ToolsError`.
Object.defineProperty(ToolsError, Symbol.hasInstance, {
  value(this: unknown, value: unknown): boolean {
    try {
      if (this !== ToolsError) return Function.prototype[Symbol.hasInstance].call(this, value)
      return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[brand] === true
    } catch {
      return false
    }
  },
})

/** One path-qualified violation, from schema checks and value validation. */
export interface Violation {
  /** JSON-pointer-like path, `''` for the root, e.g. `/items/0/name`. */
  readonly path: string
  readonly message: string
}

/** Formats violations as `path: message; …` (root shown as `(root)`). */
export function formatViolations(violations: readonly Violation[]): string {
  return violations.map((v) => `${v.path === '' ? '(root)' : v.path}: ${v.message}`).join('; ')
}

/** No visible, admitted tool has this name. */
export class ToolNotFoundError extends ToolsError {
  readonly toolName: string
  constructor(toolName: string, message = `unknown tool: ${toolName}`) {
    super('UNKNOWN_TOOL', message)
    this.toolName = toolName
  }
}

/** The arguments do not match the tool's parameter schema (or are not lossless JSON). */
export class ToolArgsError extends ToolsError {
  readonly violations: readonly Violation[]
  constructor(message: string, violations: readonly Violation[] = [], options?: { cause?: unknown }) {
    super('INVALID_ARGS', message, options)
    this.violations = violations
  }
}

/** A body or a post-execute policy produced a value outside the tool's output schema. */
export class ToolOutputError extends ToolsError {
  readonly violations: readonly Violation[]
  constructor(message: string, violations: readonly Violation[] = [], options?: { cause?: unknown }) {
    super('INVALID_TOOL_OUTPUT', message, options)
    this.violations = violations
  }
}

/** A raw JSON Schema uses something outside the enforced subset; lists every bad path. */
export class JsonSchemaError extends ToolsError {
  readonly violations: readonly Violation[]
  constructor(violations: readonly Violation[], prefix = 'unsupported JSON Schema') {
    super('INVALID_SCHEMA', `${prefix}: ${formatViolations(violations)}`)
    this.violations = violations
  }
}

/** A value is not lossless JSON. */
export class NotJsonError extends ToolsError {
  readonly path: string
  constructor(path: string, message: string) {
    super('NOT_JSON', `${path === '' ? '(root)' : path}: ${message}`)
    this.path = path
  }
}

/** A definition or registration option is invalid. */
export class ToolRegistrationError extends ToolsError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('INVALID_REGISTRATION', message, options)
  }
}

/** A restriction filter is invalid. */
export class ToolRestrictionError extends ToolsError {
  constructor(message: string) {
    super('INVALID_RESTRICTION', message)
  }
}

/** A policy or guard denied the call. */
export class ToolDeniedError extends ToolsError {
  constructor(message: string) {
    super('DENIED', message)
  }
}

/** The call was cancelled (`ABORTED`, or `ABORTED_BEFORE_DISPATCH` when no body ran). */
export class ToolAbortedError extends ToolsError {
  constructor(code: 'ABORTED' | 'ABORTED_BEFORE_DISPATCH', message: string) {
    super(code, message)
  }
}

/** The timeout policy's own deadline fired. */
export class ToolTimeoutError extends ToolsError {
  readonly timeoutMs: number
  constructor(timeoutMs: number) {
    super('TOOL_TIMEOUT', `tool call timed out after ${timeoutMs} ms`)
    this.timeoutMs = timeoutMs
  }
}

/** A tool body, listener or renderer threw. */
export class ToolExecutionError extends ToolsError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('TOOL_ERROR', message, options)
  }
}

/** No executor is selected for the calling scope. */
export class NoExecutorError extends ToolsError {
  constructor(message = 'no tool executor is available for this scope') {
    super('NO_EXECUTOR', message)
  }
}

/** An executor failed internally after draining; committed outcomes are preserved. */
export class ToolBatchExecutionError extends ToolsError {
  readonly results: readonly unknown[]
  constructor(message: string, results: readonly unknown[], options?: { cause?: unknown }) {
    super('BATCH_FAILED', message, options)
    this.results = results
  }
}

/**
 * The longest message `describeThrown` gives, in UTF-16 units; a longer one keeps its head and says how
 * long it was. A message is no place for data: a tool that threw a 50 MB message had it rendered, logged
 * and sent whole, a second of the host thread.
 */
export const MAX_THROWN_MESSAGE_CHARS = 64 * 1024

/**
 * A readable message for any thrown value, total: `throw "x"`, objects whose
 * coercion throws and revoked proxies all produce a string. At most
 * {@link MAX_THROWN_MESSAGE_CHARS} characters (and a note of the cut).
 */
export function describeThrown(thrown: unknown): string {
  let message: string
  try {
    if (thrown instanceof Error) {
      const own = thrown.message
      message = typeof own === 'string' && own !== '' ? own : String(thrown.name || 'Error')
    } else if (typeof thrown === 'string') message = thrown
    else if (thrown === undefined) message = 'undefined was thrown'
    else message = String(thrown)
  } catch {
    return 'a value was thrown that cannot be described'
  }
  if (message.length <= MAX_THROWN_MESSAGE_CHARS) return message
  return `${textHead(message, MAX_THROWN_MESSAGE_CHARS)}… (cut from ${message.length} characters)`
}

/** Stable codes of session sink failures. */
export type SessionErrorCode =
  /** The event is not a `{ type: string, time: number, ... }` record. */
  | 'INVALID_EVENT'
  /** `append` was called after `close()` (or after the session was disposed). */
  | 'SESSION_CLOSED'
  /** The session file could not be opened or repaired; `cause` is the system error. */
  | 'SESSION_OPEN_FAILED'
  /** A write failed; the session refuses every later append (`cause` is the first failure). */
  | 'SESSION_WRITE_FAILED'

/** A session sink failure; non-JSON events are `NotJsonError` instead. */
export class SessionError extends ToolsError {
  declare readonly code: SessionErrorCode
  constructor(code: SessionErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, options)
  }
}
