/**
 * A tool and one call of it: the definition a harness registers and the execution, context and
 * result of each call. One file, because the two refer to each other (a definition's callbacks take
 * a call's execution and context; a call's context carries the step's resolved tool set of definitions).
 */
import type { JsonValue } from '../json/types.js'
import type { ToolCallView, ToolResultView } from '../presentation/types.js'
import type { JsonSchemaNode } from '../schema/json-schema.js'
import type { ContentBlock, ModelSelection, ToolCallId, ToolSchema, UserMessage } from './content.js'
import type { Agent, ScopeKey } from './scope.js'

/** The canonical output contract, applied after the body returns. */
export interface ToolOutputDefinition {
  /** Supported raw JSON Schema enforced on every successful value. */
  readonly schema: JsonSchemaNode
  /** Pure projection from arguments and value to model content. */
  render(args: unknown, value: JsonValue): ContentBlock[]
  /** Pure replayable presentation projection. */
  presentationMeta?(args: unknown, value: JsonValue): JsonValue
}

/** A registered tool: its model-facing schema plus execution and host-only metadata. */
export interface ToolDefinition extends ToolSchema {
  readonly output: ToolOutputDefinition
  /** Run one accepted call; settle only after owned work is quiescent. */
  execute(args: unknown, exec: ToolRunContext): Promise<unknown>
  /** Execution-prepared content installed before `tools/post-execute`. */
  projectContent?(exec: Readonly<ToolExecution>, result: Readonly<ToolExecutionResult>): ContentBlock[] | undefined
  /** Last-mile content transform, exactly once for every outcome. Must be total. */
  finalizeContent?(exec: Readonly<ToolExecution>, result: Readonly<ToolExecutionResult>): ContentBlock[] | undefined
  /** Cooperative timeout budget in milliseconds (enforced by `@ptc/tools/timeout`). Never sent to the model. */
  timeoutMs?: number
  /** Pure overlap classifier: only an exact `true` is parallel. Never sent to the model. */
  isConcurrencySafe?(args: unknown): boolean
  presentCall?(args: unknown): ToolCallView | undefined
  presentResult?(args: unknown, result: ToolResult): ToolResultView | undefined
}

/** Inputs of a step-time activation condition. */
export interface ToolActivationContext {
  readonly agent: Agent
  readonly modelSelection: Readonly<ModelSelection>
  readonly signal: AbortSignal
}

export interface ToolRegistrationOptions {
  /** Omission enables the tool; false excludes it; a rejection fails step preparation. */
  readonly when?: (context: ToolActivationContext) => boolean | Promise<boolean>
}

/** Per-scope live filter over inherited tools. */
export interface ToolRestriction {
  readonly allow?: readonly string[]
  readonly deny?: readonly string[]
}

/** One step's admitted registrations, shared by native and PTC dispatch. */
export interface ResolvedToolSet {
  /** Close admission after the step's batch settles. */
  dispose(): void
  /** Admitted registrations still visible in their original scope; another scope is never admitted. */
  view(scope: ScopeKey | undefined): ReadonlyMap<string, ToolDefinition>
}

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
/** Localized approval prompt text; `en` is required. */
export interface DisplayReason {
  readonly en: string
  readonly [locale: string]: string
}

export interface ToolErrorInfo {
  name: string
  code: string
  /** Raw user-facing detail, kept in durable projections but never in model content. */
  reason?: string
  /** An approval that was deferred (`APPROVAL_DEFERRED`): the ask decision's localized reason, for a person. */
  displayReason?: DisplayReason
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
