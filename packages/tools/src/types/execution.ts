import type { JsonValue } from '../json/types.js'
import type { ContentBlock, ToolCallId, ToolSchema, UserMessage } from './content.js'
import type { ResolvedToolSet } from './definition.js'
import type { Agent } from './scope.js'

declare const toolExecutionTokenBrand: unique symbol

/** Opaque call identity: comparable, never mutable execution state. */
export type ToolExecutionToken = symbol & { readonly [toolExecutionTokenBrand]: true }

/** Parsed input to the shared pipeline; the pipeline adds its own token. */
export interface ToolExecutionInput {
  readonly callId: ToolCallId
  /** Root model-requested call of this tree; omitted for a root execution. */
  readonly rootCallId?: ToolCallId
  readonly name: string
  /** Binding-time schema of a PTC sub-call; frozen by its producer and never logged. */
  readonly schema?: ToolSchema
  /** Lossless-JSON arguments (tools validate their own schema). */
  readonly arguments: unknown
  readonly agent?: Agent
  /** Step admission shared by native and PTC dispatch. Conditional tools require it. */
  readonly toolSet?: ResolvedToolSet
  /** Token of the enclosing transport execution; marks a transport sub-dispatch. */
  readonly parent?: ToolExecutionToken
  /** Required caller-owned cancellation. */
  readonly signal: AbortSignal
}

/** One pending call inside the pipeline: frozen arguments, immutable identity. */
export interface ToolExecution extends ToolExecutionInput {
  readonly rootCallId: ToolCallId
  readonly token: ToolExecutionToken
  /** Deep-frozen lossless copy of the arguments. */
  readonly arguments: JsonValue
}

/** Around-dispatch view: a `tools/execute` wrapper may replace only the signal. */
export interface ToolDispatchExecution extends Omit<ToolExecution, 'signal'> {
  signal: AbortSignal
}

/** What a tool body receives besides its arguments. */
export interface ToolRunContext extends ToolExecution {
  /** Attach a context to this execution's own result, emitted after it in call order. */
  deferContext(context: UserMessage): void
  /** Mark a successful result as terminal for the current agent turn. */
  concludeTurn(): void
}

/** Structured identity of a failure. */
export interface ToolErrorInfo {
  name: string
  code: string
  /** Raw user-facing detail, kept in durable projections but never in model content. */
  reason?: string
}

export interface ToolFailure {
  /** Message without the `Error: ` envelope. */
  message: string
  info?: ToolErrorInfo
}

export interface ToolExecutionSuccess {
  readonly isError: false
  /** Execution-local canonical value; never in durable events. */
  readonly value: JsonValue
  readonly content: ContentBlock[]
  readonly error?: never
  readonly meta?: JsonValue
  readonly additionalContexts?: UserMessage[]
  readonly concludesTurn?: true
}

export interface ToolExecutionFailure {
  readonly isError: true
  readonly error: ToolFailure
  readonly value?: never
  readonly content: ContentBlock[]
  readonly meta?: JsonValue
  readonly additionalContexts?: UserMessage[]
  readonly concludesTurn?: never
}

/** The discriminated, execution-local outcome of one call. */
export type ToolExecutionResult = ToolExecutionSuccess | ToolExecutionFailure

/** The durable projection of a result (what `tool/result` events carry). */
export interface ToolResult {
  readonly isError: boolean
  readonly content: readonly ContentBlock[]
  readonly error?: ToolFailure
  readonly meta?: JsonValue
}

/** Scheduling mode of one pending call. */
export type ToolExecutionMode = { kind: 'parallel' } | { kind: 'exclusive' }
