import { createQuickJSRuntime } from '@ptc/sandbox-quickjs'
import { hostileProgramSuite } from './hostile.suite.js'

hostileProgramSuite('quickjs worker', () => createQuickJSRuntime({ isolation: 'worker' }), { maxLagMs: 250 })

const INLINE_CANNOT =
  'inline isolation runs the guest on the calling thread: nothing can preempt a long native builtin there (documented limit of inline mode)'
hostileProgramSuite('quickjs inline', () => createQuickJSRuntime({ isolation: 'inline' }), {
  skip: {
    'a long native builtin (huge Array.prototype.join) is stopped by the wall watchdog': INLINE_CANNOT,
  },
})
