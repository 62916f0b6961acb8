export { createQuickJSRuntime } from './runtime.js'
export type { QuickJSRuntimeOptions, QuickJSSessionOptions } from './runtime.js'
export type { QuickJSVariantName } from './engine/module.js'
