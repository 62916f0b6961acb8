import type { JsonValue } from '../json/types.js'
import type { ToolCallView, ToolResultView } from '../presentation/types.js'
import type { JsonSchemaNode } from '../schema/json-schema.js'
import type { ContentBlock, ModelSelection, ToolSchema } from './content.js'
import type { ToolExecution, ToolExecutionResult, ToolResult, ToolRunContext } from './execution.js'
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
