export { createPtcExecutor, sdkText, type PtcExecutorOptions } from './executor.js'
export type { PtcTracingOptions } from './tracing.js'
export { SDK_GUIDANCE } from './guidance.js'
export { withHostedPrograms, type HostedProgramsOptions } from './hosted.js'
export { CodeRunFailedError, ResumeError, type ResumeErrorCode } from './errors.js'
export type { AwaitingApproval } from './durable/awaiting.js'
export type { DurableOptions } from './durable/options.js'
export {
  RUN_CODE_DESCRIPTION,
  RUN_CODE_LONG_PARAMETERS,
  RUN_CODE_PARAMETERS,
  parseRunCodeArgs,
  type RunCodeArgs,
  type RunCodeWaitArgs,
} from './run-code-args.js'
export type { LongRunOptions } from './long-runs.js'
export { DEFAULT_LOG_LIMITS, ELIDED_HEAD_CHARS, type Elision, type LogLimits } from './log-limits.js'
export { renderRunText } from './render.js'
export { RUNTIME_ANSWER_GRACE_MS } from './answered.js'
export { DEFAULT_MAX_FORWARDED_CHARS } from './scheduler/forwarding.js'
/**
 * Lives in `@ptc/tools/executor` (the native executor counts abandoned bodies too); re-exported for existing
 * imports.
 */
export { MAX_ABANDONED_BODIES } from '@ptc/tools/executor'
/** Lives in `@ptc/tools` (the default `render` of `defineTool` uses it); re-exported for existing imports. */
export { prettyJson } from '@ptc/tools'
export { DEFAULT_DISCOVERY_BUDGET_CHARS, SEARCH_TOOLS, type DiscoveryOptions } from './discovery/options.js'
export { SEARCH_TOOLS_BINDING } from './discovery/sdk-section.js'
