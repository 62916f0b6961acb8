import { availableParallelism } from 'node:os'
import { DEFAULT_LIMITS, DEFAULT_MAX_QUEUED_RUNS, MAX_TIMER_MS, SandboxUsageError, resolveLimits } from '@ptc/sandbox'
import {
  DEFAULT_MAX_QUEUED_PROGRAM_BYTES,
  GUEST_PRELUDE,
  PROGRAM_FILENAME,
  checkSessionKey,
  RunGate,
  acceptRun,
  preloadTypeScriptStripper,
  resolveSessionLimits,
} from '@ptc/sandbox/backend'
import type { CodeRunLimits, CodeRunRequest, CodeRunResult, CodeRuntime } from '@ptc/sandbox'
import type { SessionLimits } from '@ptc/sandbox/session'
import { InlineLane } from './host/inline.js'
import { ProcessPool } from './host/process-pool.js'
import { RunHost } from './host/run-host.js'
import { IsolateSessions, type SessionTicket } from './host/sessions.js'
import { loadIsolatedVm } from './load.js'

/** Options of `createIsolatedVmRuntime`. */
export interface IsolatedVmRuntimeOptions {
  /** Default limits of this runtime's runs (over `DEFAULT_LIMITS`); a request's limits override them. */
  limits?: Partial<CodeRunLimits>
  /**
   * Where isolates run.
   * - `'process'` (default): in child processes this runtime starts and kills. A run whose isolate
   *   does not stop within `stopGraceMs` of its answer (a long built-in such as a default `sort()`
   *   of millions of numbers ignores the isolate's disposal) or whose isolate runs V8 out of memory
   *   gets its process killed (SIGKILL): the guest stops consuming CPU, the host stays stable, and
   *   only the runs hosted by that process fail (as `crash`, or `memory` for the culprit).
   * - `'none'`: in this process. A sequential sub-call is several times cheaper, but it is unsafe
   *   against hostile code: a long built-in keeps a core busy after its `timeout` answer (up to
   *   minutes, and `process.exit()` can then crash or hang) and V8 running out of memory in an
   *   isolate is a `crash` that leaves an isolate thread parked for good. Its programs' `Date`s see this
   *   process's time zone (V8 has one per process; child processes run in UTC). For trusted code only.
   */
  containment?: 'process' | 'none'
  /**
   * Child processes kept running (`'process'` containment), all started with the runtime and each
   * replaced as soon as it dies. Default: `os.availableParallelism()`, at least 2. An idle child costs
   * about 52-63 MiB of RSS (built).
   */
  processes?: number
  /**
   * Runs one child process hosts at once (`'process'` containment), each in its own isolate.
   * Default 1: a child is killed when one of its runs cannot be stopped by disposing its isolate (a
   * long built-in; V8 out of memory), and every run it hosts fails with it (as `crash`; the culprit
   * as `timeout` or `memory`), so only with 1 (and `maxExtraRuns` 0) does a hostile program never take another
   * run down.
   * More runs per child trade that for throughput and memory: on 2 cores, 16 concurrent runs of 200
   * sequential sub-calls took 335 ms on 2 processes x 4 runs against 569 ms on 8 x 1 (loaded machine).
   * New runs avoid a child while a run it was told to stop has not confirmed its end.
   */
  runsPerProcess?: number
  /**
   * Runs executing at once; later runs wait (their wall clock runs meanwhile), in order within each tenant
   * (`CodeRunRequest.tenant`; a freed place goes to the waiting tenant with the fewest runs in progress).
   * Default: `processes * runsPerProcess` (`'process'`), 8 (`'none'`).
   */
  maxConcurrentRuns?: number
  /**
   * `'process'` containment: runs that may start past `maxConcurrentRuns` while as many long runs run (runs that have
   * used `LONG_RUN_CPU_MS` (50 ms) of CPU, or held their engine `LONG_RUN_HELD_MS` (50 ms) while runs wait); each goes
   * to a child process beside such a run, in an isolate of its own (a thread and about 2 MiB; the OS shares the cores),
   * so runaway programs do not keep short ones waiting. A run placed beside a long run fails with it (`crash`) if that
   * run must be killed, so this is opt-in: default 0 (a long run keeps its place, and with `runsPerProcess` 1 no run
   * ever shares a process); `DEFAULT_MAX_EXTRA_RUNS` (16) where liveness matters more than that guarantee.
   */
  maxExtraRuns?: number
  /**
   * Runs waiting for a place; one more ends at once as `limit`. Default `DEFAULT_MAX_QUEUED_RUNS` (256): a waiting run
   * holds no isolate, only its request and a deadline timer (it leaves the queue at its wall deadline).
   */
  maxQueuedRuns?: number
  /**
   * The total size of the programs that may wait for a place, in UTF-8 bytes; a run whose program would go past
   * it ends at once as `limit` (a run that finds the queue empty may wait whatever its size). Default
   * `DEFAULT_MAX_QUEUED_PROGRAM_BYTES` (16 MiB).
   */
  maxQueuedProgramBytes?: number
  /**
   * How long a child process may take, after a run's answer, to confirm that nothing of the run
   * still runs before it is killed (`'process'` containment). Default 100 ms. On Linux a child that
   * used less than a quarter of that in CPU meanwhile (it waited for a core) gets another grace, up to
   * 5 s after the answer, instead of being killed with the sessions it keeps.
   */
  stopGraceMs?: number
  /**
   * Isolates each engine keeps created and ready (context and prelude setup included) for runs with
   * the default memory limit; each serves exactly one run (or the runs of one session). Default 2 (`'none'`), 1 per
   * child process (`'process'`); 0 creates every isolate on demand.
   */
  warmIsolates?: number
  /**
   * Check that node runs with `--no-node-snapshot` (execArgv or NODE_OPTIONS), which isolated-vm
   * needs on Node 20+. Default true; turn it off only for a Node build without a startup snapshot.
   * Child processes always start with the flag.
   */
  checkNodeSnapshot?: boolean
  /**
   * Loads the isolated-vm module (default: `require('isolated-vm')`); for tests and custom builds.
   * With `'process'` containment it is only used to check that the module loads here: the child
   * processes load isolated-vm themselves.
   */
  loader?: () => unknown
  /**
   * Sandbox sessions (`CodeRunRequest.session`; `endSession`). isolated-vm cannot snapshot a heap, so
   * a session is a live isolate kept idle, between its runs, in the engine (child process) that ran
   * its first program; its runs go to that engine (waiting for it when it is busy), and it is lost,
   * the next run starting fresh with a note, when a run of it does not end cleanly (timeout, abort,
   * memory, crash, a log flood stopped mid-flight) or its engine process dies. There is no
   * `suspendSession`/`resumeSession`: a live isolate cannot be turned into bytes.
   *
   * Live isolates hold memory: each kept session costs its heap (`result.session.bytes`, at most
   * `maxSessionBytes`; a run leaving more loses the session) plus about 1-2 MiB of isolate and
   * context, in its engine process, until it is ended, idle for `idleTtlMs`, or evicted as the least
   * recently used of `maxSessions` (default 64: up to 64 x (64 MiB + 2 MiB) in the worst case with
   * the default `maxSessionBytes`; lower both where memory is tight). A session keeps the memory
   * limit its isolate was made with (the first run's `memoryBytes`), which caps a later run's higher one.
   * A later run's lower `memoryBytes` holds by measure: its heap, between its tasks and at its end, over
   * that ends it as `memory` (the session is lost), though within one task it may grow to the isolate's limit.
   */
  sessions?: Partial<SessionLimits>
}

/** The isolated-vm `CodeRuntime`, with a read-only diagnostic view of its child processes. */
export interface IsolatedVmRuntime extends CodeRuntime {
  /** The pids of the live engine child processes (`'process'` containment; empty with `'none'`). */
  readonly processIds: readonly number[]
}

function positiveInteger(
  value: number | undefined,
  fallback: number,
  name: string,
  min = 1,
  max = Number.MAX_SAFE_INTEGER,
): number {
  const v = value ?? fallback
  if (!Number.isInteger(v) || v < min) throw new SandboxUsageError(`${name} must be an integer of at least ${min}`)
  if (v > max) throw new SandboxUsageError(`${name} must be at most ${max}, not ${v}`)
  return v
}

class IsolatedVmCodeRuntime implements IsolatedVmRuntime {
  readonly name = 'isolated-vm'

  /** This runtime's limits when a request sets none: its `limits` option over `DEFAULT_LIMITS`. */
  get limits(): Readonly<CodeRunLimits> {
    return this.#defaults
  }
  readonly #defaults: Readonly<CodeRunLimits>
  readonly #gate: RunGate
  readonly #pool: ProcessPool | undefined
  readonly #inline: InlineLane | undefined
  readonly #live = new Set<RunHost>()
  readonly #sessions: IsolateSessions
  #disposed = false
  #disposing: Promise<void> | undefined

  constructor(options: IsolatedVmRuntimeOptions) {
    this.#defaults = Object.freeze(resolveLimits(options.limits, DEFAULT_LIMITS))
    const containment = options.containment ?? 'process'
    if (containment !== 'process' && containment !== 'none')
      throw new SandboxUsageError('containment must be "process" or "none"')
    const inline = containment === 'none'
    const warm = positiveInteger(options.warmIsolates, inline ? 2 : 1, 'warmIsolates', 0)
    const processes = positiveInteger(options.processes, Math.max(2, availableParallelism()), 'processes')
    const perProcess = positiveInteger(options.runsPerProcess, 1, 'runsPerProcess')
    // A timer longer than MAX_TIMER_MS fires at once: a child killed at every answer, not given longer.
    const graceMs = positiveInteger(options.stopGraceMs, 100, 'stopGraceMs', 1, MAX_TIMER_MS)
    const concurrent = positiveInteger(
      options.maxConcurrentRuns,
      inline ? 8 : processes * perProcess,
      'maxConcurrentRuns',
    )
    const queued = positiveInteger(options.maxQueuedRuns, DEFAULT_MAX_QUEUED_RUNS, 'maxQueuedRuns', 0)
    const maxExtraRuns = positiveInteger(options.maxExtraRuns, 0, 'maxExtraRuns', 0)
    const queuedBytes = positiveInteger(
      options.maxQueuedProgramBytes,
      DEFAULT_MAX_QUEUED_PROGRAM_BYTES,
      'maxQueuedProgramBytes',
    )
    const sessionLimits = Object.freeze(resolveSessionLimits(options.sessions))
    const ivm = loadIsolatedVm({ loader: options.loader, checkNodeSnapshot: options.checkNodeSnapshot })
    // A kept isolate may wait for the program's leftover jobs this long, well within the grace after
    // which a child is killed.
    this.#sessions = new IsolateSessions(sessionLimits, inline ? 50 : Math.max(1, Math.floor(graceMs / 2)))
    this.#gate = new RunGate(concurrent, queued, queuedBytes)
    if (inline) this.#inline = new InlineLane(ivm, warm, this.#defaults.memoryBytes)
    else {
      this.#pool = new ProcessPool({
        processes,
        runsPerProcess: perProcess,
        graceMs,
        config: {
          warmIsolates: warm,
          memoryBytes: this.#defaults.memoryBytes,
          prelude: GUEST_PRELUDE,
          programFilename: PROGRAM_FILENAME,
        },
        // Runs past a slice of CPU share their children with fresh runs: their places go to those.
        maxExtraRuns,
        lend: (places) => this.#gate.lend(places),
        waiting: () => this.#gate.queued,
      })
    }
    // The isolates are warmed where they run; the TypeScript stripper is loaded here, meanwhile.
    preloadTypeScriptStripper()
  }

  get processIds(): readonly number[] {
    return Object.freeze(this.#pool?.pids ?? [])
  }

  async run(request: CodeRunRequest): Promise<CodeRunResult> {
    if (this.#disposed) throw new SandboxUsageError('the runtime is disposed', 'SANDBOX_DISPOSED')
    // Its parked calls would wait until the wall ceiling: say at once that this backend cannot suspend.
    if (request !== null && typeof request === 'object' && request.durable !== undefined) {
      throw new SandboxUsageError(
        'isolated-vm cannot suspend a run: durable runs need a runtime with resumeRun (QuickJS)',
      )
    }
    const accepted = await acceptRun(request, this.#defaults, this.#gate)
    if (!accepted.ok) return accepted.result
    let ticket: SessionTicket | undefined
    if (request.session !== undefined) {
      const taken = await this.#sessions.take(request.session)
      if (!taken.ok) {
        accepted.release()
        const wallMs = performance.now() - accepted.startedAt
        return {
          logs: [],
          error: { kind: 'limit', message: taken.message },
          stats: { cpuMs: 0, wallMs, queueMs: wallMs, subCalls: 0 },
        }
      }
      ticket = taken
    }
    const run = new RunHost(request, accepted, ticket?.placement)
    try {
      if (!run.ended) {
        if (this.#disposed) run.stop('abort')
        this.#live.add(run)
        if (this.#inline !== undefined) this.#inline.start(run)
        else this.#pool?.place(run)
      }
      const result = await run.result
      if (ticket !== undefined) result.session = await this.#sessions.give(ticket, run)
      return result
    } finally {
      this.#live.delete(run)
      accepted.release()
    }
  }

  /**
   * Drops a session: its isolate is disposed (a run of it in progress finishes, and its isolate is
   * not kept). Whether the session existed.
   */
  async endSession(key: string): Promise<boolean> {
    return this.#sessions.end(checkSessionKey(key))
  }

  dispose(): Promise<void> {
    this.#disposing ??= (async () => {
      this.#disposed = true
      this.#gate.close()
      const live = [...this.#live]
      for (const run of live) run.stop('abort')
      await Promise.all(live.map((run) => run.result))
      this.#sessions.clear()
      this.#inline?.dispose()
      await this.#pool?.dispose()
      // Isolates of completed runs are freed one macrotask after their result: let that happen.
      await new Promise((resolve) => setImmediate(resolve))
    })()
    return this.#disposing
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.dispose()
  }
}

/**
 * The native backend: each run gets a fresh isolated-vm isolate (V8, JIT speed) with its own heap
 * limit, disposed when the run ends (a session's is kept alive between its runs: see `sessions`);
 * by default the isolates live in child processes that are killed when a guest cannot be stopped
 * otherwise (see `containment`). Throws
 * `SandboxBackendUnavailableError` (code `SANDBOX_BACKEND_UNAVAILABLE`) when isolated-vm is not
 * installed or node lacks `--no-node-snapshot`.
 */
export function createIsolatedVmRuntime(options: IsolatedVmRuntimeOptions = {}): IsolatedVmRuntime {
  return new IsolatedVmCodeRuntime(options)
}
