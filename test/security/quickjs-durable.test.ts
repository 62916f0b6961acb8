/** The hostile battery against QuickJS programs that run inside a resumed durable run (see durable-runtime.ts). */
import { createQuickJSRuntime } from '@ptc/sandbox-quickjs'
import { HOST_LAG_BOUND_MS, hostileProgramSuite } from './hostile.suite.js'
import { resumedDurableRuntime } from './durable-runtime.js'

/** Fixed, so that every runtime the suite makes (the liveness section makes several) seals and opens alike. */
const SECRET = new Uint8Array(32).map((_, i) => (i * 37 + 11) & 0xff)

const PROGRAM_BYTES =
  "maxProgramBytes bounds a run's program text, which is the seed's here: the battery's program reaches the resumed guest as a call result, which nothing but memory bounds (the plain quickjs suite runs this test)"

hostileProgramSuite(
  'quickjs worker, resumed durable run',
  (extras) => resumedDurableRuntime(createQuickJSRuntime({ isolation: 'worker', secret: SECRET, ...extras })),
  {
    backend: 'quickjs-worker',
    maxLagMs: HOST_LAG_BOUND_MS,
    skip: {
      'liveness: a program over maxProgramBytes ends as limit before any work': PROGRAM_BYTES,
    },
  },
)
