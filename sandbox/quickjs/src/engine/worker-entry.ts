/**
 * The worker thread of worker isolation: one engine run at a time on a reused QuickJS module.
 * Imports only relative files and npm packages (plus `@ptc/sandbox`, resolved by the worker's
 * own loader: its `dist` when built, its source with `--conditions=@ptc/source` from tests).
 */
import { measureMemory } from 'node:vm'
import { parentPort, workerData } from 'node:worker_threads'
import { LogJournal } from './journal.js'
import { ReplyMailbox, type MailboxMemory } from './mailbox.js'
import { adoptUsedPages, usedPages } from './booted-memory.js'
import { offerSpare } from './session-memory.js'
import { ModuleCache } from './module-cache.js'
import { adoptCompiled, type QuickJSVariantName, type WasmModule } from './module.js'
import { sourceOf, type FromWorker, type HostStop, type RunInput, type ToWorker } from './protocol.js'
import { EngineRun } from './run.js'
import { warmUpWhenIdle } from './warm-up.js'
import { loadFailed } from '../messages.js'

/** What an engine worker receives in `workerData` (the pool imports this type only). */
export interface EngineWorkerData {
  control: SharedArrayBuffer
  mailbox: MailboxMemory
  /** A `LogJournal`'s memory. */
  journal: SharedArrayBuffer
  variant: QuickJSVariantName
  warmBytes: number
  /** The engine's WebAssembly module as the host compiled it (see `compile`); absent, the worker compiles its own. */
  wasmModule?: WasmModule
  /**
   * The used page count an earlier worker's boot found (`adoptUsedPages`); absent, this worker's first boot
   * searches.
   */
  usedPages?: number
}

const port = parentPort
if (port === null) throw new Error('worker-entry must run in a worker thread')
const data = workerData as EngineWorkerData
const control = new Int32Array(data.control)
const mailbox = new ReplyMailbox(data.mailbox, control)
const journal = new LogJournal(data.journal)
if (data.wasmModule !== undefined) adoptCompiled(data.variant, data.wasmModule)
if (data.usedPages !== undefined) adoptUsedPages(data.variant, data.usedPages)
const cache = new ModuleCache(data.variant, 1)
// Load the module now, so the first run does not pay for it.
const warm = Promise.resolve(cache.acquire(data.warmBytes)).then(
  (m) => cache.release(m, false),
  () => undefined,
)
/** Cancels the warm-up program (see `warmUp`), which runs once the worker had no run for a while. */
let cancelWarmUp: (() => void) | undefined
void warm.then(() => {
  const pages = usedPages(data.variant)
  post(pages === undefined ? { t: 'ready' } : { t: 'ready', usedPages: pages })
  // Run there, the warm-up ends before any message is handled.
  cancelWarmUp = warmUpWhenIdle(cache, data.warmBytes)
})

interface Run {
  runId: number
  engine: EngineRun | undefined
  stop?: HostStop
  /** Spins in a row that ran out before the reply came. */
  misses: number
  /** Waits on the host without spinning since spinning stopped paying. */
  skipped: number
}

let current: Run | undefined

function post(message: FromWorker): void {
  port?.postMessage(message)
}

async function begin(runId: number, input: RunInput & { wallRemainingMs: number }): Promise<void> {
  // A run came first: it warms what it runs itself.
  cancelWarmUp?.()
  const run: Run = { runId, engine: undefined, misses: 0, skipped: 0 }
  current = run
  const deadline = performance.now() + input.wallRemainingMs
  journal.reopen()
  let image
  try {
    await warm
    image = await cache.acquire(input.limits.memoryBytes, input.session?.id)
    if (input.session !== undefined || input.durable !== undefined || input.resume !== undefined)
      await image.prepareSessions()
  } catch (error) {
    post({
      t: 'done',
      runId,
      outcome: {
        logs: [],
        cpuMs: 0,
        subCalls: 0,
        broken: true,
        error: { kind: 'crash', message: loadFailed(error) },
      },
    })
    return
  }
  const loaded = image
  const engine = new EngineRun(
    loaded,
    { ...input, source: sourceOf(input), wallRemainingMs: Math.max(0, deadline - performance.now()) },
    {
      flush: (calls, logs) => post({ t: 'flush', runId, calls, logs }),
      // Posting never re-enters the engine: the guest may hand calls over while it runs.
      takesCallsMidRun: true,
      logged: (text) => journal.append(text),
      done: (outcome) => {
        if (cache.release(loaded, outcome.broken)) garbage = true
        if (outcome.session !== undefined && loaded.resident === outcome.session.id && cache.keeps(loaded))
          outcome.resident = outcome.session.id
        if (current === run) current = undefined
        // The session's (or the suspended run's) memory moves to the host (this thread keeps no copy).
        const memory = outcome.session ?? outcome.suspended?.memory
        port?.postMessage(
          { t: 'done', runId, outcome } satisfies FromWorker,
          memory === undefined ? [] : [memory.ranges.buffer as ArrayBuffer, memory.data.buffer as ArrayBuffer],
        )
        if (garbage) collectWhenIdle()
      },
    },
    control,
  )
  run.engine = engine
  engine.start()
  if (run.stop !== undefined) engine.stop(run.stop)
  else awaitReplies(run)
}

/**
 * A dropped engine (see `ModuleCache.release`) keeps its WebAssembly memory, up to its run's cap,
 * resident until this thread's garbage collector runs, and an idle worker does not collect on its
 * own: after a burst with memory bombs, hundreds of MiB stayed resident in idle workers. So once the
 * worker is idle after a drop, it asks for a collection: `vm.measureMemory` with eager execution
 * collects this thread's heap (`--expose-gc` would be a process-wide flag, handing `gc` to every
 * context created meanwhile). A run that arrives first postpones it to that run's end.
 */
let garbage = false
const COLLECT_AFTER_IDLE_MS = 20

function collectWhenIdle(): void {
  setTimeout(() => {
    if (!garbage || current !== undefined) return
    garbage = false
    measureMemory({ mode: 'summary', execution: 'eager' }).catch(() => undefined)
  }, COLLECT_AFTER_IDLE_MS)
}

// Node 20 marks vm.measureMemory experimental and warns once per thread: the warning is about this
// worker's internals, not for the user of ptc.
const emitWarning = process.emitWarning.bind(process)
process.emitWarning = ((warning: string | Error, ...rest: unknown[]) => {
  if (String(warning instanceof Error ? warning.message : warning).includes('vm.measureMemory')) return
  ;(emitWarning as (...args: unknown[]) => void)(warning, ...rest)
}) as typeof process.emitWarning

/**
 * How long a worker whose guest waits on the host spins for the reply before it sleeps (see
 * `ReplyMailbox.wait`). After `SPIN_MISSES` spins in a row ran out, the run spins again only once
 * every `RETRY_EVERY` waits, so slow tools cost almost no spinning.
 */
const SPIN_MS = 0.25
const SPIN_MISSES = 4
const RETRY_EVERY = 64

/**
 * While the run's guest waits on the host, takes the replies from the mailbox instead of the event
 * loop; back to the event loop when the run stops or a reply comes by message.
 */
function awaitReplies(run: Run): void {
  while (current === run && run.engine?.awaitingHost === true) {
    const spin = run.misses < SPIN_MISSES || ++run.skipped % RETRY_EVERY === 0
    const reply = mailbox.wait(run.runId, spin ? SPIN_MS : 0)
    if (reply === undefined) return
    if (spin) run.misses = reply.slept ? run.misses + 1 : 0
    run.engine.deliver(reply.batch, reply.count)
  }
}

port.on('message', (message: ToWorker) => {
  if (message.t === 'run') {
    if (message.spare !== undefined) offerSpare(message.spare)
    void begin(message.runId, message.input)
    return
  }
  if (message.t === 'settle' || message.t === 'suspend') mailbox.received()
  const run = current
  if (run === undefined || run.runId !== message.runId) return
  if (message.t === 'settle') {
    run.engine?.deliver(message.batch, message.count)
    awaitReplies(run)
  } else if (message.t === 'suspend') {
    run.engine?.suspend(message.parked)
    if (run.engine !== undefined) awaitReplies(run)
  } else if (run.engine === undefined) run.stop = message.reason
  else run.engine.stop(message.reason)
})
