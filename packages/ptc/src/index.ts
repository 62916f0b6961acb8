export { createPtcExecutor, sdkText, SDK_GUIDANCE, type PtcExecutorOptions } from './executor.js'
export { CodeRunFailedError } from './errors.js'
export { RUN_CODE_DESCRIPTION, RUN_CODE_PARAMETERS, parseRunCodeArgs, type RunCodeArgs } from './transport.js'
export { renderRunText, prettyJson } from './render.js'
