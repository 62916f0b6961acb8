/** The hostile battery against QuickJS programs that run in a resumed sandbox session (see session-runtime.ts). */
import { createQuickJSRuntime } from '@ptc/sandbox-quickjs'
import { HOST_LAG_BOUND_MS, hostileProgramSuite } from './hostile.suite.js'
import { resumedSessionRuntime } from './session-runtime.js'

const QUEUE =
  'each battery run is two runs of the runtime here (the seed, then the program), which the queue tests count'

hostileProgramSuite(
  'quickjs worker, resumed session',
  (extras) => resumedSessionRuntime(createQuickJSRuntime({ isolation: 'worker', ...extras })),
  {
    backend: 'quickjs-worker',
    maxLagMs: HOST_LAG_BOUND_MS,
    skip: {
      'liveness: a run past maxQueuedRuns ends as limit at once': QUEUE,
      'liveness: dispose while runs are queued settles every one of them': QUEUE,
    },
  },
)
