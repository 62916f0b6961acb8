export { createQuickJSRuntime } from './runtime.js'
export type { QuickJSRuntimeOptions } from './runtime.js'
export type { QuickJSVariantName } from './engine/module.js'
