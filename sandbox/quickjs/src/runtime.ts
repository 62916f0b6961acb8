import { availableParallelism } from 'node:os'
import { DEFAULT_LIMITS, DEFAULT_MAX_QUEUED_RUNS, MAX_TIMER_MS, SandboxUsageError, resolveLimits } from '@ptc/sandbox'
import {
  DEFAULT_HOLD_MS,
  DEFAULT_MAX_EXTRA_RUNS,
  DEFAULT_MAX_QUEUED_PROGRAM_BYTES,
  RunGate,
  parkedHolder,
  checkSessionKey,
  claimHolder,
  claimHolderGone,
  SessionTable,
  acceptRun,
  messageOf,
  preloadTypeScriptStripper,
  resolveSessionLimits,
  stopError,
  type SessionSpill,
  type SessionTurn,
} from '@ptc/sandbox/backend'
import type { CodeRunError, CodeRunLimits, CodeRunRequest, CodeRunResult, CodeRuntime, JsonValue } from '@ptc/sandbox'
import type { LimitCeilings, ParkedHostCall } from '@ptc/sandbox/backend'
import { randomBytes } from 'node:crypto'
import {
  openSnapshotAsync,
  sealSnapshotAsync,
  SessionStoreError,
  SnapshotError,
  STORE_WAIT_MS,
  type DurableRun,
  type ParkedCall,
  type ResumeRunRequest,
  type SessionLimits,
  type SessionStore,
  type SnapshotKey,
  type SuspendedRun,
  type SuspendedRunState,
} from '@ptc/sandbox/session'
import type { SessionMemory } from './engine/image.js'
import {
  decodeRun,
  decodeSession,
  encodeRun,
  encodeSession,
  sessionBuild,
  type SavedRun,
  type SavedSession,
} from './host/session-snapshot.js'
import { MAX_GUEST_BYTES, type QuickJSVariantName } from './engine/module.js'
import type { Engines } from './host/engines.js'
import { RunHost } from './host/run-host.js'
import { InlineEngines } from './host/inline.js'
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
   * Worker threads (worker isolation), booted when the runtime is created (`prewarm`) or with the first run: the first alone, the
   * others once it is up and free or a run waits for it (workers booting together slow each other down); a terminated or crashed worker
   * is replaced at once (one that keeps dying on its own, after a growing delay). A positive integer;
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
   * queue by `CodeRunRequest.tenant`, and a freed place goes to the tenants in turn.
   */
  maxConcurrentRuns?: number
  /**
   * Worker isolation: runs that may start past `maxConcurrentRuns` while as many runs that have used
   * `LONG_RUN_CPU_MS` (50 ms) of CPU hold workers; each gets a worker booted for it (past the pool size: a thread
   * and about 18 MiB each, plus its guest's memory), so runaway programs do not keep short ones waiting. Workers
   * past the need exit after 5 s idle. Default `DEFAULT_MAX_EXTRA_RUNS` (16); 0: a long run keeps its place.
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

/** How often, at most, a session store without expiry of its own is swept (`SessionStore.sweep`). */
const SWEEP_EVERY_MS = 10 * 60_000

/** A QuickJS engine's memory is WebAssembly's: at most 2 GiB, its own 32 MiB included. */
const CEILINGS: LimitCeilings = {
  memoryBytes: {
    max: MAX_GUEST_BYTES,
    why: "a QuickJS engine's memory is WebAssembly memory, at most 2 GiB, of which 32 MiB is the engine's own",
  },
}

/** Default `watchdogGraceMs`. */
export const DEFAULT_WATCHDOG_GRACE_MS = 50

/** The QuickJS `CodeRuntime` (exported for tests, which inject their engines; the public face is `createQuickJSRuntime`). */
export class QuickJSCodeRuntime implements CodeRuntime {
  readonly name = 'quickjs'

  /** This runtime's limits when a request sets none: its `limits` option over `DEFAULT_LIMITS`. */
  get limits(): Readonly<CodeRunLimits> {
    return this.#defaults
  }
  readonly #defaults: Readonly<CodeRunLimits>
  readonly #engines: Engines
  readonly #gate: RunGate
  readonly #grace: number
  readonly #live = new Set<RunHost>()
  readonly #sessions: SessionTable<SessionMemory>
  readonly #variant: QuickJSVariantName
  readonly #secret: SnapshotKey
  /** Runs `openRun` opened and `resumeRun` has not taken yet. */
  readonly #opened = new WeakMap<SuspendedRun, SavedRun>()
  #disposed = false
  #disposing: Promise<void> | undefined

  constructor(options: QuickJSRuntimeOptions, engines?: Engines) {
    this.#defaults = Object.freeze(resolveLimits(options.limits, DEFAULT_LIMITS, CEILINGS))
    const { store, secret, suspendAfterMs, storeWaitMs, claimMs, ...sessionLimits } = options.sessions ?? {}
    const limits = Object.freeze(resolveSessionLimits(sessionLimits))
    if (store !== undefined && secret === undefined && options.secret === undefined) {
      throw new SandboxUsageError(
        'sessions.store needs sessions.secret: the key that authenticates suspended sessions, the same in every process that resumes them',
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
    this.#secret = options.secret ?? secret ?? randomBytes(32)
    this.#variant = options.variant ?? 'quickjs'
    let sweptAt = 0
    const holder = claimHolder('quickjs')
    const claim = store?.claim?.bind(store)
    const release = store?.release?.bind(store)
    const spill: SessionSpill<SessionMemory> | undefined =
      store === undefined
        ? undefined
        : {
            suspendAfterMs: suspendAfterMs ?? 60_000,
            storeWaitMs: storeWaitMs ?? STORE_WAIT_MS,
            ...(claimMs !== undefined && { claimMs }),
            save: async (key, memory, runs) => {
              await store.set(key, await this.#seal(key, { memory, runs }), { ttlMs: limits.idleTtlMs })
              // Sessions nobody came back for expire; a store that does not drop them itself is swept now and then.
              if (store.sweep !== undefined && Date.now() - sweptAt >= SWEEP_EVERY_MS) {
                sweptAt = Date.now()
                void store.sweep().catch(() => undefined)
              }
            },
            load: async (key) => {
              let bytes: Uint8Array | undefined
              try {
                bytes = await store.get(key)
              } catch (error) {
                // What the store holds may be fine: the run is refused rather than started fresh (and saved over it later).
                if (error instanceof SessionStoreError && error.code !== 'unavailable') throw error
                throw new SessionStoreError(
                  'unavailable',
                  `the session store failed to read session "${key}": ${messageOf(error)}`,
                  { cause: error },
                )
              }
              if (bytes === undefined) return undefined
              const { memory, runs } = await this.#open(key, bytes)
              return { state: memory, bytes: sizeOf(memory), runs }
            },
            remove: (key) => store.delete(key),
            // One process at a time holds a session live; the others refuse its programs until it is back in the store.
            ...(claim !== undefined &&
              release !== undefined && {
                claim: async (key, ttlMs, replaces) => {
                  const other = await claim(key, holder, ttlMs, replaces === undefined ? {} : { replaces })
                  // Held by a process of this machine that died (killed, crashed): taken over now, not once its claim runs out.
                  return other !== undefined && claimHolderGone(other.holder)
                    ? claim(key, holder, ttlMs, { replaces: other.holder })
                    : other
                },
                release: (key) => release(key, holder),
                hand: (key, to, ttlMs) => claim(key, to, ttlMs, { replaces: holder }),
                unhand: (key, from) => release(key, from),
              }),
          }
    // A state let go of (replaced by its run's next capture, expired, evicted, saved) gives its buffer back to the engines.
    this.#sessions = new SessionTable(limits, (memory) => this.#engines.recycle?.(memory), spill)
    const variant = options.variant ?? 'quickjs'
    const cores = availableParallelism()
    const inline = options.isolation === 'inline'
    // Every option is checked before anything is built.
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
    this.#gate = new RunGate(
      concurrent,
      options.maxQueuedRuns ?? DEFAULT_MAX_QUEUED_RUNS,
      options.maxQueuedProgramBytes ?? DEFAULT_MAX_QUEUED_PROGRAM_BYTES,
    )
    this.#grace = grace
    this.#engines =
      engines ??
      (inline
        ? new InlineEngines(variant, this.#defaults.memoryBytes)
        : new WorkerPool({
            size: poolSize,
            variant,
            warmBytes: this.#defaults.memoryBytes,
            journalBytes: this.#defaults.maxOutputBytes,
            maxExtraRuns,
          }))
    // Runs past a slice of CPU hold workers of their own: their places go to fresh runs.
    if (this.#engines instanceof WorkerPool) this.#engines.lendTo((places) => this.#gate.lend(places))
    if (options.prewarm !== false) {
      this.#engines.warm()
      preloadTypeScriptStripper()
    }
  }

  async run(request: CodeRunRequest): Promise<CodeRunResult> {
    if (this.#disposed) throw new SandboxUsageError('the runtime is disposed', 'SANDBOX_DISPOSED')
    // Checked before the run takes a place in the gate: a refused request must not keep one.
    const durable =
      request !== null && typeof request === 'object' && request.durable !== undefined
        ? checkDurable(request.durable)
        : undefined
    const accepted = await acceptRun(request, this.#defaults, this.#gate, {
      sessionSourceOnEngine: this.#engines instanceof WorkerPool,
      ceilings: CEILINGS,
    })
    if (!accepted.ok) return accepted.result
    const { bindings, limits, program } = accepted
    let turn: SessionTurn<SessionMemory> | undefined
    if (request.session !== undefined) {
      turn = await this.#sessions.take(request.session, Date.now(), {
        deadline: accepted.deadline,
        signal: request.signal,
      })
      if (!turn.ok) {
        accepted.release()
        const wallMs = performance.now() - accepted.startedAt
        const error: CodeRunError =
          turn.reason === 'abort'
            ? stopError('abort', limits)
            : turn.reason === 'wall'
              ? {
                  kind: 'timeout',
                  message: `wall-clock limit of ${limits.wallMs} ms exceeded before the program started (${turn.message})`,
                }
              : { kind: 'limit', message: turn.message }
        return { logs: [], error, stats: { cpuMs: 0, wallMs, queueMs: wallMs, subCalls: 0 } }
      }
    }
    const host = new RunHost(request, accepted, this.#grace)
    // Admitted as `dispose()` began (it closed the gate, but this run already held a place).
    if (this.#disposed) host.stop('abort')
    else if (request.signal?.aborted) host.stop('abort')
    let given = false
    try {
      if (!host.ended) {
        this.#live.add(host)
        const memory = turn?.ok === true ? turn.entry.state : undefined
        const maxBytes = this.#sessions.limits.maxSessionBytes
        const session =
          turn === undefined ? undefined : memory === undefined ? { maxBytes } : { id: memory.id, memory, maxBytes }
        // A session program is wrapped on its engine's thread (a parse of the whole program): in a worker.
        const source =
          program.session && this.#engines instanceof WorkerPool ? { sessionBody: program.body } : program.source
        this.#engines.execute(host, {
          source,
          bindings,
          limits,
          ...(session === undefined ? {} : { session }),
          ...(durable !== undefined && { durable: { maxBytes } }),
        })
      }
      const result = await host.result
      if (durable !== undefined && host.suspended !== undefined) {
        const session =
          turn?.ok === true
            ? {
                key: turn.entry.key,
                runs: turn.entry.runs,
                ...(this.#sessions.holdsInStore && { stored: true as const }),
              }
            : undefined
        result.suspended = await this.#suspended(durable, host, {
          code: request.code,
          language: request.language ?? 'typescript',
          bindings,
          limits,
          logs: result.logs,
          ...(session !== undefined && { session }),
        })
      }
      if (turn?.ok === true && result.suspended !== undefined && durable !== undefined) {
        // The session's state goes on with the suspended run: held for its resume.
        given = true
        result.session = await this.#sessions.park(
          turn.entry,
          parkedHolder(durable.key),
          durable.holdMs ?? DEFAULT_HOLD_MS,
          turn.fresh,
        )
      } else if (turn?.ok === true) {
        given = true
        result.session = this.#sessions.give(turn.entry, this.#left(host, result), turn.fresh, turn.note)
      }
      return result
    } finally {
      this.#live.delete(host)
      accepted.release()
      // Whatever happened on the host side, the session is not left taken.
      if (turn?.ok === true && !given)
        this.#sessions.give(
          turn.entry,
          { reason: 'the run failed on the host; the session keeps its state from before the run' },
          turn.fresh,
        )
    }
  }

  /** What a session run leaves its session: the memory its engine captured, or why none. */
  #left(host: RunHost, result: CodeRunResult): { state: SessionMemory; bytes: number } | { reason: string } {
    const left = host.session
    if (left !== undefined) return { state: left, bytes: sizeOf(left) }
    if (host.sessionOver !== undefined) {
      return {
        reason: `the run left ${host.sessionOver} bytes of state, over the session's budget of ${this.#sessions.limits.maxSessionBytes} (maxSessionBytes); the session keeps its state from before the run`,
      }
    }
    return {
      reason: `the run ended (${result.error?.kind ?? 'ok'}) without its engine's state; the session keeps its state from before the run`,
    }
  }

  /** The sealed state and parked calls of a run that suspended (`host.suspended`). */
  async #suspended(
    durable: DurableRun,
    host: RunHost,
    run: Pick<SavedRun, 'code' | 'language' | 'bindings' | 'limits' | 'logs' | 'session'>,
  ): Promise<SuspendedRunState> {
    const s = host.suspended as NonNullable<RunHost['suspended']>
    const saved: SavedRun = {
      ...run,
      memory: s.memory,
      cpuMs: s.cpuMs,
      subCalls: s.subCalls,
      outputBytes: s.outputBytes,
      wallRemainingMs: host.remainingMs,
      parked: s.parked,
      ...(durable.data !== undefined && { data: durable.data() }),
    }
    const state = await sealSnapshotAsync(
      encodeRun(saved),
      { build: await sessionBuild(this.#variant), session: runIdentity(durable.key) },
      this.#secret,
    )
    return { state, parked: s.parked.map(parkedCall) }
  }

  /**
   * Opens the sealed state of a suspended run (`CodeRunResult.suspended.state`) bound to `key`, from
   * this process or another of the same build with the same secret. Throws `SnapshotError` for bytes
   * that are tampered with, truncated, foreign or bound to another key; nothing runs until `resumeRun`.
   */
  async openRun(key: string, state: Uint8Array): Promise<SuspendedRun> {
    if (this.#disposed) throw new SandboxUsageError('the runtime is disposed', 'SANDBOX_DISPOSED')
    const payload = await openSnapshotAsync(
      state,
      { build: await sessionBuild(this.#variant), session: runIdentity(checkSessionKey(key)) },
      this.#secret,
    )
    let saved: SavedRun
    try {
      saved = decodeRun(payload)
    } catch (error) {
      if (error instanceof SnapshotError) throw error
      throw new SnapshotError('tampered', error instanceof Error ? error.message : String(error))
    }
    const run: SuspendedRun = Object.freeze({
      key,
      ...(saved.data !== undefined && { data: saved.data }),
      parked: Object.freeze(saved.parked.map(parkedCall)),
      logs: Object.freeze([...saved.logs]),
    })
    this.#opened.set(run, saved)
    return run
  }

  /**
   * Continues a run `openRun` opened where it suspended: its parked calls are made again, first, through
   * `request.call`; then the program goes on under the limits it started with (the wall and CPU it used,
   * its sub-calls and output counted). Resolves with its outcome (`suspended` again if it parks again).
   */
  async resumeRun(run: SuspendedRun, request: ResumeRunRequest): Promise<CodeRunResult> {
    if (this.#disposed) throw new SandboxUsageError('the runtime is disposed', 'SANDBOX_DISPOSED')
    const saved = this.#opened.get(run)
    if (saved === undefined) throw new SandboxUsageError("resumeRun takes a run from this runtime's openRun, once")
    if (request === null || typeof request !== 'object' || typeof request.call !== 'function')
      throw new SandboxUsageError('resumeRun needs { call }')
    if (saved.session?.stored === true && !this.#sessions.holdsInStore) {
      // Resumed here, it would take a session of this runtime's own, and the one in the store would stay held for it.
      throw new SandboxUsageError(
        `this program ran in sandbox session ${JSON.stringify(saved.session.key)}, which waits for it in a session store: resume it on a runtime with that store (sessions.store); nothing ran`,
      )
    }
    const data = saved.data
    const durable = checkDurable(request.durable ?? { key: run.key, ...(data !== undefined && { data: () => data }) })
    this.#opened.delete(run)
    // Admitted as any run (the gate), with what was left of its wall; the limits stay the run's.
    const { call, signal, onLog } = request
    const again: CodeRunRequest = {
      code: saved.code,
      language: saved.language,
      bindings: saved.bindings,
      call,
      limits: { ...saved.limits, wallMs: Math.max(1, saved.wallRemainingMs) },
      durable,
      ...(signal !== undefined && { signal }),
      ...(onLog !== undefined && { onLog }),
    }
    const session = saved.session
    // A run that ends here without going on (refused, out of time) holds its session no more: it goes on from before it.
    const unhold = async (): Promise<void> => {
      if (session !== undefined) await this.#sessions.unpark(session.key, parkedHolder(run.key)).catch(() => undefined)
    }
    const accepted = await acceptRun(again, this.#defaults, this.#gate, { ceilings: CEILINGS })
    if (!accepted.ok) {
      await unhold()
      return accepted.result
    }
    // A session run: its session, held for this resume (here, or in the store for whichever process resumes it).
    let turn: SessionTurn<SessionMemory> | undefined
    let wentOn: string | undefined
    if (session !== undefined) {
      turn = await this.#sessions.take(
        session.key,
        Date.now(),
        { deadline: accepted.deadline, signal },
        parkedHolder(run.key),
      )
      if (!turn.ok && turn.reason === 'store') {
        // Nothing ran, and the session stays held: its caller may put the run's state back and resume it later.
        accepted.release()
        throw new SessionStoreError(
          'unavailable',
          `${turn.message.replace(/; the program did not run.*$/, '')}: the run did not go on, and the session is still held for it`,
        )
      }
      if (!turn.ok && turn.reason !== undefined) {
        await unhold()
        accepted.release()
        const wallMs = performance.now() - accepted.startedAt
        const error: CodeRunError =
          turn.reason === 'abort'
            ? stopError('abort', saved.limits)
            : { kind: 'timeout', message: `the run's wall-clock limit was reached before it went on (${turn.message})` }
        return { logs: [], error, stats: { cpuMs: saved.cpuMs, wallMs, queueMs: wallMs, subCalls: saved.subCalls } }
      }
      // The session went on without this run (its hold ended): the run goes on, its state is not the session's.
      if (!turn.ok) wentOn = turn.message
      else if (turn.entry.state === undefined && turn.entry.runs === 0) turn.entry.runs = session.runs
    }
    const clock = { ...accepted, limits: saved.limits }
    const host = new RunHost(again, clock, this.#grace, saved.subCalls - saved.parked.length)
    if (this.#disposed || signal?.aborted === true) host.stop('abort')
    let given = false
    try {
      if (!host.ended) {
        this.#live.add(host)
        const resume = {
          memory: saved.memory,
          parked: saved.parked.map((c): [number, string, string] => [c.id, c.name, c.argsJson]),
          cpuMs: saved.cpuMs,
          subCalls: saved.subCalls - saved.parked.length,
          outputBytes: saved.outputBytes,
        }
        const maxBytes = this.#sessions.limits.maxSessionBytes
        this.#engines.execute(host, {
          source: '',
          bindings: saved.bindings,
          limits: saved.limits,
          durable: { maxBytes },
          ...(turn?.ok === true && { session: { maxBytes } }),
          resume,
        })
      }
      const result = await host.result
      if (host.suspended !== undefined) {
        const held = turn?.ok === true ? { key: turn.entry.key, runs: turn.entry.runs } : undefined
        result.suspended = await this.#suspended(durable, host, {
          code: saved.code,
          language: saved.language,
          bindings: saved.bindings,
          limits: saved.limits,
          logs: [...saved.logs, ...result.logs],
          ...(held !== undefined && { session: held }),
        })
      }
      if (turn?.ok === true) {
        given = true
        result.session =
          result.suspended !== undefined
            ? await this.#sessions.park(turn.entry, parkedHolder(durable.key), durable.holdMs ?? DEFAULT_HOLD_MS, false)
            : this.#sessions.give(turn.entry, this.#left(host, result), false)
      } else if (session !== undefined) {
        result.session = {
          key: session.key,
          fresh: false,
          kept: false,
          bytes: 0,
          runs: session.runs + 1,
          note: wentOn ?? 'the session was not taken',
        }
      }
      return result
    } finally {
      this.#live.delete(host)
      accepted.release()
      if (turn?.ok === true && !given)
        this.#sessions.give(
          turn.entry,
          { reason: 'the resumed run failed on the host; the session keeps its state from before the run' },
          false,
        )
    }
  }

  /**
   * Drops a run `openRun` opened instead of resuming it: the session it held, if it ran in one, goes on from
   * its state before the run (here, or from the session store for whichever process runs it next).
   */
  async dropRun(run: SuspendedRun): Promise<void> {
    if (this.#disposed) throw new SandboxUsageError('the runtime is disposed', 'SANDBOX_DISPOSED')
    const saved = this.#opened.get(run)
    if (saved === undefined) throw new SandboxUsageError("dropRun takes a run from this runtime's openRun, once")
    this.#opened.delete(run)
    if (saved.session !== undefined) await this.#sessions.unpark(saved.session.key, parkedHolder(run.key))
  }

  async endSession(key: string): Promise<boolean> {
    return this.#sessions.end(checkSessionKey(key))
  }

  /**
   * Takes an idle session out of this runtime as sealed bytes (compressed, bound to this build and the
   * key, authenticated with `sessions.secret`); undefined when the session does not exist or holds no
   * state yet. Throws `SandboxUsageError` while one of its programs runs. With `sessions.store`, the copy the
   * store holds from an earlier idle period is removed first (a later run of the key would have gone on from
   * it): throws `SessionStoreError` (`unavailable`), the session left here as it was, when that fails or takes
   * longer than `sessions.storeWaitMs`, and (`claimed`) when another process sharing the store took the session.
   */
  async suspendSession(key: string): Promise<Uint8Array | undefined> {
    const saved = await this.#sessions.detach(checkSessionKey(key))
    const sealed = saved === undefined ? undefined : await this.#seal(key, { memory: saved.state, runs: saved.runs })
    // Its claim on the store has ended by the time the bytes are handed over: another process may resume them.
    await this.#sessions.quiet(key)
    return sealed
  }

  /**
   * Makes `snapshot` (from `suspendSession`, here or in another process of the same build with the
   * same secret) session `key` again, replacing an idle session of that key. Throws `SnapshotError`
   * (`@ptc/sandbox/session`) for bytes that are tampered with, truncated, of another build or
   * another session (or a suspended run's state), and (`too-large`) for a session over
   * `sessions.maxSessionBytes`, and changes nothing then. At `maxSessions` with as many saves to the store in
   * progress, waits for one of them (at most `sessions.storeWaitMs`), then throws `SessionStoreError`
   * (`unavailable`).
   */
  async resumeSession(key: string, snapshot: Uint8Array): Promise<void> {
    if (this.#disposed) throw new SandboxUsageError('the runtime is disposed', 'SANDBOX_DISPOSED')
    const { memory, runs } = await this.#open(checkSessionKey(key), snapshot)
    await this.#sessions.attach(key, memory, sizeOf(memory), runs)
  }

  async #seal(key: string, saved: SavedSession): Promise<Uint8Array> {
    return sealSnapshotAsync(
      encodeSession(saved),
      { build: await sessionBuild(this.#variant), session: key },
      this.#secret,
    )
  }

  async #open(key: string, snapshot: Uint8Array): Promise<SavedSession> {
    return decodeSession(
      await openSnapshotAsync(snapshot, { build: await sessionBuild(this.#variant), session: key }, this.#secret),
    )
  }

  dispose(): Promise<void> {
    this.#disposing ??= (async () => {
      this.#disposed = true
      this.#gate.close()
      const live = [...this.#live]
      for (const host of live) host.stop('abort')
      await Promise.all(live.map((h) => h.result))
      // Idle sessions go to the store, when there is one (their saves are awaited); the rest is dropped.
      await this.#sessions.close()
      await this.#engines.dispose()
    })()
    return this.#disposing
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.dispose()
  }
}

/** The default `CodeRuntime`: QuickJS (WebAssembly), worker isolation unless told otherwise. */
export function createQuickJSRuntime(options: QuickJSRuntimeOptions = {}): CodeRuntime {
  return new QuickJSCodeRuntime(options)
}

/** The identity a suspended run's state is sealed under: never a session's (those are plain keys). */
function runIdentity(key: string): string {
  return `run\u0000${key}`
}

function checkDurable(durable: unknown): DurableRun {
  if (typeof durable !== 'object' || durable === null)
    throw new SandboxUsageError('durable must be { key, data?, holdMs? }')
  const { key, data, holdMs } = durable as { key?: unknown; data?: unknown; holdMs?: unknown }
  checkSessionKey(key)
  if (data !== undefined && typeof data !== 'function')
    throw new SandboxUsageError('durable.data must be a function returning the JSON value to seal with the state')
  if (holdMs !== undefined && !(typeof holdMs === 'number' && holdMs > 0 && Number.isFinite(holdMs)))
    throw new SandboxUsageError('durable.holdMs must be a positive finite number of milliseconds')
  return {
    key: key as string,
    ...(data !== undefined && { data: data as () => JsonValue }),
    ...(holdMs !== undefined && { holdMs: holdMs as number }),
  }
}

function parkedCall(call: ParkedHostCall): ParkedCall {
  return {
    name: call.name,
    args: JSON.parse(call.argsJson) as JsonValue,
    ...(call.detail !== undefined && { detail: call.detail }),
  }
}

function sameKey(a: SnapshotKey, b: SnapshotKey): boolean {
  return Buffer.from(typeof a === 'string' ? Buffer.from(a) : a).equals(
    Buffer.from(typeof b === 'string' ? Buffer.from(b) : b),
  )
}

function sizeOf(memory: SessionMemory): number {
  return memory.data.byteLength + memory.ranges.byteLength
}
