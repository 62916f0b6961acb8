import { availableParallelism } from 'node:os'
import { MAX_TIMER_MS, SandboxUsageError, type CodeRunLimits } from '@ptc/sandbox'
import { DEFAULT_MAX_EXTRA_RUNS, type LimitCeilings } from '@ptc/sandbox/backend'
import type { SessionLimits, SessionStore, SnapshotKey } from '@ptc/sandbox/session'
import { MAX_GUEST_BYTES, type QuickJSVariantName } from './engine/module.js'
import type { Engines } from './host/engines.js'
import { WorkerPool } from './host/pool.js'

/** Options of `createQuickJSRuntime`. */
export interface QuickJSRuntimeOptions {
  /**
   * `'worker'` (default): guests run in a pool of worker threads; a watchdog terminates a worker
   * that overruns the wall ceiling or the CPU budget (even inside a native builtin) and replaces it.
   * `'inline'`: guests run on the calling thread — for trusted code and benchmarks; it cannot stop
   * a long native builtin (see `InlineEngines`), nor hold a guest to its CPU budget or wall between
   * QuickJS's interrupt polls (every 10 000 calls or jumps), which a guest can keep seconds apart.
   */
  isolation?: 'worker' | 'inline'
  /**
   * Worker threads (worker isolation), booted when the runtime is created (`prewarm`) or with the first run: the
   * first alone, the others once it is up and free or a run waits for it (workers booting together slow each other
   * down); a terminated or crashed worker is replaced at once (one that keeps dying on its own, after a growing
   * delay). A positive integer;
   * default: `os.availableParallelism()`.
   */
  poolSize?: number
  /**
   * Runs that hold an engine at once; later runs wait, in order within each tenant. The wait counts against each
   * run's wall ceiling (a run still waiting at its deadline ends as `timeout`) and is reported in
   * `stats.queueMs`. Default: worker isolation, the pool size (one run per worker). Inline, twice
   * `os.availableParallelism()`: inline runs share the calling thread, so more of them at once adds
   * no CPU, only overlap while runs wait on tools, and each holds its own engine (a WebAssembly
   * memory of up to `memoryBytes` + 32 MiB); so the bound is that memory, not the cores. Waiting runs
   * queue by `CodeRunRequest.tenant`, and a freed place goes to the waiting tenant with the fewest runs in progress
   * (in turn among equals).
   */
  maxConcurrentRuns?: number
  /**
   * Worker isolation: runs that may start past `maxConcurrentRuns` while as many long runs hold workers (runs that
   * have used `LONG_RUN_CPU_MS` (50 ms) of CPU, or held their worker `LONG_RUN_HELD_MS` (50 ms) while runs wait); each
   * gets a worker booted for it (past the pool size: a thread and about 18 MiB each, plus its guest's memory), so
   * runaway programs do not keep short ones waiting. Workers past the need exit after 5 s idle. Default
   * `DEFAULT_MAX_EXTRA_RUNS` (16); 0: a long run keeps its place.
   */
  maxExtraRuns?: number
  /**
   * Runs that may wait for a place (see `maxConcurrentRuns`); one more ends at once as `limit`
   * ("the runtime's run queue is full"). Default `DEFAULT_MAX_QUEUED_RUNS` (256).
   */
  maxQueuedRuns?: number
  /**
   * The total size of the programs that may wait for a place, in UTF-8 bytes; a run whose program would go past
   * it ends at once as `limit` (a run that finds the queue empty may wait whatever its size). Default
   * `DEFAULT_MAX_QUEUED_PROGRAM_BYTES` (16 MiB).
   */
  maxQueuedProgramBytes?: number
  /** `'quickjs'` (bellard, default) or `'quickjs-ng'`. */
  variant?: QuickJSVariantName
  /** Default limits of this runtime's runs (over `DEFAULT_LIMITS`); a request's limits override them. */
  limits?: Partial<CodeRunLimits>
  /**
   * How long a worker may ignore a wall or abort stop, or run past its CPU budget, before it is terminated;
   * the run answers at that moment. A guest between bytecodes stops within a few milliseconds of the stop;
   * only a long native builtin (a huge `join`, a backtracking regex) or a guest that keeps QuickJS from polling
   * for interrupts (a recursion that catches its own stack overflows) runs into this; such a run answers about
   * 50-90 ms past its deadline (measured on 2 loaded cores), with the log entries the worker had
   * accepted. Default: 50 ms.
   */
  watchdogGraceMs?: number
  /**
   * Make the engines ready when the runtime is created (default true): the worker pool boots at once
   * (its idle workers never keep the process alive), inline a module is loaded and booted, and the
   * TypeScript stripper is loaded meanwhile, so the first run does not wait for them. An engine that then
   * has no run for 50 ms runs a small warm-up program with no host, so that the first real run finds the
   * code it runs compiled (a trivial first run asked a second after creation: 11-16 ms in a worker instead
   * of 19-24). `false`: they start with the first run.
   */
  prewarm?: boolean
  /** Sandbox sessions (`CodeRunRequest.session`): bounds, and where idle ones are suspended to. */
  sessions?: QuickJSSessionOptions
  /**
   * The key that authenticates what this runtime suspends (HMAC-SHA256; at least 16 bytes): sessions and
   * durable runs (`CodeRunRequest.durable`). Every process that resumes them needs the same one. Default:
   * `sessions.secret`, else random per runtime (then only this runtime can resume them).
   */
  secret?: SnapshotKey
}

/**
 * A QuickJS session's state is the memory its programs changed (compared with the booted engine),
 * kept on the host between runs so any worker can run its next program; `suspendSession` seals it
 * into bytes that `resumeSession` takes back, here or in another process of the same build.
 */
export interface QuickJSSessionOptions extends Partial<SessionLimits> {
  /**
   * Where sessions go when they leave memory (idle for `suspendAfterMs`, or the least recently used at
   * `maxSessions`), and where a session not in memory is looked for before it starts fresh: the same
   * store behind several processes lets a session move between them. Needs `secret`.
   */
  store?: SessionStore
  /**
   * The key that authenticates suspended sessions (HMAC-SHA256; at least 16 bytes): every process
   * that resumes a session needs the one that suspended it. Default: random per runtime.
   */
  secret?: SnapshotKey
  /** With a `store`: a session idle this long is suspended to it and leaves memory. Default 60 000 ms. */
  suspendAfterMs?: number
  /**
   * With a `store`: how long `dispose()` waits for the saves in progress and `endSession` for a removal
   * before giving up on a store that does not answer (`endSession` then throws `SessionStoreError`
   * `unavailable`). A run waits for its session's state at most until its own wall deadline. Default 10 000 ms.
   */
  storeWaitMs?: number
  /**
   * With a store that has claims (the file and Redis stores): how long this process's claim on a session it
   * holds lasts unless renewed (it is renewed while the session is held, every quarter of this at most): after a
   * crash, a process on another machine waits about this long (plus what was left of the run) before it takes
   * the session. From 1 000 ms; default 30 000 ms (`CLAIM_MS`).
   */
  claimMs?: number
}

/** A QuickJS engine's memory is WebAssembly's: at most 2 GiB, its own 32 MiB included. */
export const CEILINGS: LimitCeilings = {
  memoryBytes: {
    max: MAX_GUEST_BYTES,
    why: "a QuickJS engine's memory is WebAssembly memory, at most 2 GiB, of which 32 MiB is the engine's own",
  },
}

/** Default `watchdogGraceMs`. */
export const DEFAULT_WATCHDOG_GRACE_MS = 50

/**
 * Checks the `sessions` options of a runtime (its limits are checked by `resolveSessionLimits`).
 * @throws SandboxUsageError naming the option
 */
export function checkSessionOptions(options: QuickJSRuntimeOptions): void {
  const { store, secret, suspendAfterMs, storeWaitMs, claimMs } = options.sessions ?? {}
  if (store !== undefined && secret === undefined && options.secret === undefined) {
    throw new SandboxUsageError(
      'sessions.store needs sessions.secret: the key that authenticates suspended sessions, the same in every ' +
        'process that resumes them',
    )
  }
  if (suspendAfterMs !== undefined && !(suspendAfterMs > 0 && Number.isFinite(suspendAfterMs))) {
    throw new SandboxUsageError('sessions.suspendAfterMs must be a positive finite number')
  }
  if (storeWaitMs !== undefined && !(storeWaitMs > 0 && Number.isFinite(storeWaitMs))) {
    throw new SandboxUsageError('sessions.storeWaitMs must be a positive finite number')
  }
  if (claimMs !== undefined && !(claimMs >= 1000 && claimMs <= MAX_TIMER_MS)) {
    throw new SandboxUsageError(`sessions.claimMs must be a number of milliseconds from 1000 to ${MAX_TIMER_MS}`)
  }
  if (secret !== undefined && options.secret !== undefined && !sameKey(secret, options.secret)) {
    throw new SandboxUsageError('secret and sessions.secret differ: give the key once (secret)')
  }
}

/** How a runtime's engines are set up, from its options (and `engines`, when a test injects them). */
export interface EngineSettings {
  readonly variant: QuickJSVariantName
  readonly inline: boolean
  readonly poolSize: number
  readonly grace: number
  /** Runs that hold an engine at once (`maxConcurrentRuns`). */
  readonly concurrent: number
  readonly maxExtraRuns: number
}

/**
 * The engine settings of `options`, every one checked before anything is built.
 * @throws SandboxUsageError naming the option
 */
export function engineSettings(options: QuickJSRuntimeOptions, engines: Engines | undefined): EngineSettings {
  const variant = options.variant ?? 'quickjs'
  const cores = availableParallelism()
  const inline = options.isolation === 'inline'
  const poolSize = options.poolSize ?? cores
  if (!Number.isInteger(poolSize) || poolSize < 1) throw new SandboxUsageError('poolSize must be a positive integer')
  const grace = options.watchdogGraceMs ?? DEFAULT_WATCHDOG_GRACE_MS
  if (!(grace >= 0) || !Number.isFinite(grace))
    throw new SandboxUsageError('watchdogGraceMs must be a non-negative number')
  if (grace > MAX_TIMER_MS)
    throw new SandboxUsageError(
      `watchdogGraceMs must be at most ${MAX_TIMER_MS} ms (a timer's longest delay), not ${grace}`,
    )
  const concurrent =
    options.maxConcurrentRuns ?? (engines instanceof WorkerPool ? engines.size : inline ? 2 * cores : poolSize)
  const maxExtraRuns = options.maxExtraRuns ?? DEFAULT_MAX_EXTRA_RUNS
  if (!Number.isInteger(maxExtraRuns) || maxExtraRuns < 0) {
    throw new SandboxUsageError('maxExtraRuns must be a non-negative integer')
  }
  return { variant, inline, poolSize, grace, concurrent, maxExtraRuns }
}

function sameKey(a: SnapshotKey, b: SnapshotKey): boolean {
  return Buffer.from(typeof a === 'string' ? Buffer.from(a) : a).equals(
    Buffer.from(typeof b === 'string' ? Buffer.from(b) : b),
  )
}
