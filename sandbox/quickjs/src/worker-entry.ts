/**
 * The worker thread of worker isolation: one session at a time on a reused QuickJS module.
 * Imports only relative files and npm packages (plus `@ptc/sandbox`, resolved by the worker's
 * own loader: its `dist` when built, its source with `--conditions=@ptc/source` from tests).
 */
import { parentPort, workerData } from 'node:worker_threads'
import { ModuleCache } from './engine/module-cache.js'
import type { QuickJSVariantName } from './engine/module.js'
import type { FromWorker, SessionInput, ToWorker } from './engine/protocol.js'
import { QuickJSSession } from './engine/session.js'

interface EngineWorkerData {
  control: SharedArrayBuffer
  variant: QuickJSVariantName
  warmBytes: number
}

const port = parentPort
if (port === null) throw new Error('worker-entry must run in a worker thread')
const data = workerData as EngineWorkerData
const control = new Int32Array(data.control)
const cache = new ModuleCache(data.variant, 1)
// Load the module now, so the first run does not pay for it.
const warm = Promise.resolve(cache.acquire(data.warmBytes)).then(
  (m) => cache.release(m, false),
  () => undefined,
)
void warm.then(() => post({ t: 'ready' }))

let current: { runId: number; session: QuickJSSession | undefined; stop?: 'abort' | 'wall' } | undefined

function post(message: FromWorker): void {
  port?.postMessage(message)
}

async function begin(runId: number, input: SessionInput): Promise<void> {
  const run: { runId: number; session: QuickJSSession | undefined; stop?: 'abort' | 'wall' } = { runId, session: undefined }
  current = run
  let image
  try {
    await warm
    image = await cache.acquire(input.limits.memoryBytes)
  } catch (error) {
    post({ t: 'done', runId, outcome: { logs: [], cpuMs: 0, subCalls: 0, broken: true, error: { kind: 'crash', message: `QuickJS failed to load: ${String(error)}` } } })
    return
  }
  const loaded = image
  const session = new QuickJSSession(loaded, input, {
    flush: (calls, logs) => post({ t: 'flush', runId, calls, logs }),
    done: (outcome) => {
      cache.release(loaded, outcome.broken)
      if (current === run) current = undefined
      post({ t: 'done', runId, outcome })
    },
  }, control)
  run.session = session
  session.start()
  if (run.stop !== undefined) session.stop(run.stop)
}

port.on('message', (message: ToWorker) => {
  if (message.t === 'run') {
    void begin(message.runId, message.input)
    return
  }
  const run = current
  if (run === undefined || run.runId !== message.runId) return
  if (message.t === 'settle') run.session?.deliver(message.batch, message.count)
  else if (run.session === undefined) run.stop = message.reason
  else run.session.stop(message.reason)
})
