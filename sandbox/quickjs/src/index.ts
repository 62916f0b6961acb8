export { createQuickJSRuntime } from './runtime.js'
export type { QuickJSRuntimeOptions, QuickJSSessionOptions } from './runtime-options.js'
export type { QuickJSVariantName } from './engine/module.js'
