import type { ContentBlock, ToolCallBlock, ToolCallId, ToolSchema, UserMessage } from './content.js'
import type { ResolvedToolSet, ToolDefinition } from './tool.js'
import type { PtcDispatchLog } from './events.js'
import type { ToolExecutionInput, ToolExecutionMode, ToolExecutionResult } from './tool.js'
import type { Agent, ScopeKey } from './scope.js'
import type { ApprovalDecision } from './approval.js'

/** Executor-owned prompt guidance (e.g. the PTC SDK text). */
export interface ToolPromptSection {
  readonly name: string
  readonly text: string
}

/** What the model may call in a step. */
export interface ToolModelInput {
  readonly schemas: ToolSchema[]
  /** Every name a model-direct call may use in this mode. */
  readonly knownNames: readonly string[]
  /** Step-specific prompt sections (e.g. the SDK declarations of the tools this scope can see). */
  readonly sections?: readonly ToolPromptSection[]
}

/** Raw model calls, with optional agent ownership and step logging. */
export interface ToolBatchInput {
  readonly calls: readonly ToolCallBlock[]
  /**
   * Required caller-owned cancellation. Through `ToolsService.execute` the executor and every call of the
   * batch (policies, wrappers, bodies) get a signal of the batch's own that aborts with this one's reason,
   * so one signal may be shared by any number of concurrent batches without a listener-leak warning.
   */
  readonly signal: AbortSignal
  /** Positive integer overriding the executor's cap for this batch (root calls only). */
  readonly maxParallelToolCalls?: number
  readonly agent?: Agent
  readonly toolSet?: ResolvedToolSet
  /** With it (and an agent with a session), `tool/call` and `tool/result` events are appended. */
  readonly log?: { readonly turn: number; readonly step: number }
  /**
   * Ids of calls of this batch that the harness already had approved (e.g. through the AI SDK's tool
   * approval, after `preflight` said `ask`): a policy's `ask` lets them run without asking the approval
   * service. A `deny`, a `cancel` and the guards still apply; sub-calls are never approved this way.
   */
  readonly approved?: readonly ToolCallId[]
}

export interface ToolCallResult {
  readonly callId: ToolCallId
  readonly result: ToolExecutionResult
}

export interface ToolBatchResult {
  readonly results: readonly ToolCallResult[]
  readonly additionalContexts: readonly UserMessage[]
  readonly concluded: boolean
}

/** Owns argument parsing, dispatch, scheduling, cancellation and logging of a batch. */
export interface ToolExecutor {
  /**
   * Guidance owned by the executor, whatever tools a scope sees (the PTC executor: its SDK guidance).
   * `modelInput()` lists these first, then the step's `describe()` sections; a step section with the same
   * name supersedes the executor's.
   */
  readonly sections?: readonly ToolPromptSection[]
  /**
   * The reserved transport (`run_code`) this executor serves, if any, built
   * once per set of services so that it can dispatch sub-calls. The pipeline routes a
   * model-direct call of that name to it, so every policy stage applies to
   * the transport itself. Never registered, never restricted.
   */
  transport?(services: ToolExecutorServices): ToolDefinition
  /**
   * Code-only collapse: a model-direct call (no `parent`) naming anything but
   * the transport is `UNKNOWN_TOOL`, decided before any policy runs.
   */
  readonly codeOnly?: boolean
  /**
   * Tools the executor owns (the PTC executor's `search_tools`): dispatched through the whole pipeline like
   * registered tools, model-direct or as a program's sub-calls, in every mode. Their names are reserved
   * while the executor is installed: registering a tool of such a name is an error.
   */
  readonly builtins?: ToolExecutorBuiltins
  describe(tools: readonly ToolDefinition[]): ToolModelInput
  execute(input: ToolBatchInput, services: ToolExecutorServices): Promise<ToolBatchResult>
  /**
   * Continues a transport call that suspended awaiting approval (`ToolsService.resume`); present on
   * executors whose programs can suspend (`createPtcExecutor({ durable })`).
   */
  resume?(input: ToolResumeInput, services: ToolExecutorServices): Promise<ToolBatchResult>
}

/** The executor-owned tools of `ToolExecutor.builtins`. */
export interface ToolExecutorBuiltins {
  /** The reserved names; `define` returns one definition for each. */
  readonly names: readonly string[]
  /** The definitions, bound to one set of services (built once per set, as the transport is). */
  define(services: ToolExecutorServices): readonly ToolDefinition[]
}

/**
 * The decision on a suspended program's deferred approval (`ToolsService.resume`): one for every call it
 * waits on, or one per call in the order its result listed them.
 */
export interface ToolResumeInput {
  /** The token of the suspended program (its `run_code` result's `awaiting.token`). */
  readonly token: string
  readonly decision: ApprovalDecision | readonly ApprovalDecision[]
  /** Required caller-owned cancellation, as for `execute`. */
  readonly signal: AbortSignal
  /** The agent the program ran for (its policies, guards, session log); after a restart, the same agent's. */
  readonly agent?: Agent
  readonly toolSet?: ResolvedToolSet
  /**
   * With it (and an agent with a session), the program's outcome is appended as its call's `tool/result`
   * (marked `resumed: true`), under this turn and step: the harness's step in which it resumed.
   */
  readonly log?: { readonly turn: number; readonly step: number }
}

/** Options of one dispatch through the services. */
export interface ToolDispatchOptions {
  /** The raw argument text could not be parsed: the call fails as `INVALID_ARGS` before any policy. */
  readonly argumentsError?: string
  /**
   * Called once when the call's policy stage (pre-execute, approval, guards)
   * is over, whether it was admitted or not; a scheduler uses it so that
   * policy stages never overlap while bodies do.
   */
  readonly onPolicySettled?: () => void
  /**
   * Called at most once, with the abort reason, when a `tools/execute`
   * wrapper replaced the body's signal (the timeout policy of
   * `@ptc/tools/timeout` does) and the signal the body runs with aborts while
   * the body is in flight, or is already aborted when it starts: a
   * `ToolTimeoutError` (code `TOOL_TIMEOUT`) when the timeout policy's
   * deadline passed, the caller's reason when the caller aborted. The caller's
   * own signal is the caller's to watch: without a replacement this is never
   * called and costs nothing. A throw from it is caught.
   *
   * An executor or scheduler uses it to bound how long it waits for a body
   * that ignores its signal (the native executor and the `run_code` scheduler
   * abandon such a call `drainGraceMs` later). The pipeline itself is not
   * changed by it: it still awaits the body to its end, never races it for its
   * outcome, and `dispatch` still settles with the call's own result.
   */
  readonly onBodyAborted?: (reason: unknown) => void
  /**
   * The harness already had this call approved (`ToolBatchInput.approved`): a policy's `ask` lets it run
   * without asking the approval service; `deny`, `cancel` and guards still apply. Ignored for a
   * sub-dispatch (one with `parent`).
   */
  readonly approved?: boolean
  /**
   * The caller can wait for a deferred approval (a durable `run_code` run's sub-call): an approval
   * service's `deferred` gives an `APPROVAL_DEFERRED` failure (its `info.reason` the policy's reason)
   * instead of a denial.
   */
  readonly deferrable?: boolean
  /**
   * The approval of this call, decided later (the call's approval was deferred): a policy's `ask` takes
   * it instead of asking the approval service. `deny`, `cancel` and guards still apply.
   */
  readonly decision?: ApprovalDecision
  /**
   * The longest JSON text the body's value (or a wrapper's or post-execute listener's replacement) may
   * have, in characters: a longer one fails the call as `INVALID_TOOL_OUTPUT` as soon as its copy has
   * counted that much, before it is validated, rendered or logged (a `run_code` program's sub-calls get
   * the run's `limits.maxResultChars`). Every call is bounded by `MAX_JSON_CHARS` (256 Mi) anyway.
   */
  readonly maxValueChars?: number
}

/**
 * What the registry hands an executor for each batch: the shared pipeline and
 * the scope's view. An executor never reaches registry internals.
 */
export interface ToolExecutorServices {
  /**
   * Run one parsed call through the whole pipeline. Never
   * rejects. `argumentsError`: the raw argument text could not be parsed; the
   * call fails as `INVALID_ARGS` before any policy (finalizeContent and
   * `tools/result` still run).
   */
  dispatch(input: ToolExecutionInput, options?: ToolDispatchOptions): Promise<ToolExecutionResult>
  /** Start-time classification: only an exact `true` from a valid call's classifier is parallel. */
  mode(input: Pick<ToolExecutionInput, 'name' | 'arguments' | 'agent' | 'toolSet'>): ToolExecutionMode
  /**
   * Visible, admitted definitions of a scope (never the transport), as registered: one frozen view per
   * registration whose `parameters` and `output.schema` are the copies taken at `register()` (what
   * `schemas()` projects), everything else read from the definition. `describe()` receives the same views.
   */
  definitions(scope?: ScopeKey, toolSet?: ResolvedToolSet): readonly ToolDefinition[]
  /** The views of the executor's own tools (`ToolExecutor.builtins`), in the order `define` gave them. */
  builtins(): readonly ToolDefinition[]
  /** The view (as in `definitions()`, or of a built-in) of the registration a call may execute, or undefined. */
  executable(name: string, scope?: ScopeKey, toolSet?: ResolvedToolSet): ToolDefinition | undefined
  /** Run the `tools/ptc-dispatch-log` waterfall; a throwing listener yields the original content. */
  ptcDispatchLog(dispatch: PtcDispatchLog): Promise<ContentBlock[]>
  /**
   * The end of the pipeline for a call whose body ended outside a dispatch (a program resumed by
   * `resume`): projectContent, `tools/post-execute`, finalizeContent and `tools/result` see `result` as
   * the call's outcome, as they would have seen it from `dispatch`. Never rejects.
   */
  complete(input: ToolExecutionInput, result: ToolExecutionResult): Promise<ToolExecutionResult>
}
