import type { ContentBlock, ToolCallId } from './content.js'
import type { PostToolDecision, PreToolDecision } from './decisions.js'
import type { ToolDispatchExecution, ToolExecution, ToolExecutionResult } from './tool.js'
import type { Agent } from './scope.js'

/** One settled `run_code` sub-dispatch about to be logged. Only the durable copy of `content` may change. */
export interface PtcDispatchLog {
  /**
   * The parent execution: the `run_code` call, or a provider-hosted program (`name` its kind such as
   * `code_execution_20250825`, `arguments` `{ code }` when known, else null).
   */
  readonly exec: ToolExecution
  readonly agent?: Agent
  /** `<parent>:ptc:<n>`. */
  readonly subCallId: ToolCallId
  readonly name: string
  readonly isError: boolean
  readonly content: ContentBlock[]
  /**
   * Absent: the call's own outcome, delivered to the program (the
   * `tool/ptc-dispatch` event). `'abandoned'`: the run stopped waiting for
   * the call (its body ignored its abort signal past the drain grace); the
   * content is the abandonment the program received, while the body may still
   * be running (`tool/ptc-dispatch` with `abandoned: true`). `'late'`: the
   * eventual outcome of an abandoned call, delivered to nothing
   * (`tool/ptc-dispatch-late`).
   */
  readonly settlement?: 'abandoned' | 'late'
}

/** Waterfall listeners: `next()` delegates to later listeners and finally the default. */
export interface ToolsWaterfalls {
  'tools/pre-execute': (
    exec: ToolExecution,
    next: () => Promise<PreToolDecision>,
  ) => PreToolDecision | Promise<PreToolDecision>
  'tools/execute': (
    exec: ToolDispatchExecution,
    next: () => Promise<ToolExecutionResult>,
  ) => ToolExecutionResult | Promise<ToolExecutionResult>
  'tools/post-execute': (
    exec: ToolExecution,
    result: Readonly<ToolExecutionResult>,
    next: () => Promise<PostToolDecision>,
  ) => PostToolDecision | Promise<PostToolDecision>
  'tools/ptc-dispatch-log': (
    dispatch: PtcDispatchLog,
    next: () => Promise<ContentBlock[]>,
  ) => ContentBlock[] | Promise<ContentBlock[]>
}

/** Emit listeners only observe; their failures are caught and cannot fail anything. */
export interface ToolsEmits {
  'tools/change': () => void
  'tools/result': (exec: Readonly<ToolExecution>, result: Readonly<ToolExecutionResult>) => void
}

export type ToolsEvents = ToolsWaterfalls & ToolsEmits
export type ToolsEventName = keyof ToolsEvents
