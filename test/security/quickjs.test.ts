import { createQuickJSRuntime } from '@ptc/sandbox-quickjs'
import { HOST_LAG_BOUND_MS, hostileProgramSuite } from './hostile.suite.js'
import { INLINE_NATIVE } from './liveness.programs.js'

hostileProgramSuite('quickjs worker', (extras) => createQuickJSRuntime({ isolation: 'worker', ...extras }), {
  backend: 'quickjs-worker',
  maxLagMs: HOST_LAG_BOUND_MS,
})

hostileProgramSuite('quickjs inline', (extras) => createQuickJSRuntime({ isolation: 'inline', ...extras }), {
  backend: 'quickjs-inline',
  skip: {
    'a long native builtin (huge Array.prototype.join) is stopped by the wall watchdog': INLINE_NATIVE,
  },
})
