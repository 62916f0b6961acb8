export { createPtcExecutor, sdkText, SDK_GUIDANCE, type PtcExecutorOptions } from './executor.js'
export { withHostedPrograms, type HostedProgramsOptions } from './hosted.js'
export { CodeRunFailedError, ResumeError, type ResumeErrorCode } from './errors.js'
export type { AwaitingApproval, DurableOptions } from './durable.js'
export { RUN_CODE_DESCRIPTION, RUN_CODE_LONG_PARAMETERS, RUN_CODE_PARAMETERS, parseRunCodeArgs, type RunCodeArgs, type RunCodeWaitArgs } from './run-code-args.js'
export type { LongRunOptions } from './long-runs.js'
export { renderRunText } from './render.js'
/** Lives in `@ptc/tools` (the default `render` of `defineTool` uses it); re-exported for existing imports. */
export { prettyJson } from '@ptc/tools'
