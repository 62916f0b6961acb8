import { DEFAULT_LIMITS, DEFAULT_MAX_QUEUED_RUNS, SandboxUsageError, resolveLimits } from '@ptc/sandbox'
import {
  DEFAULT_HOLD_MS,
  DEFAULT_MAX_QUEUED_PROGRAM_BYTES,
  Lifetime,
  RunGate,
  parkedHolder,
  checkSessionKey,
  claimHolder,
  SessionTable,
  acceptRun,
  preloadTypeScriptStripper,
  resolveSessionLimits,
  stopError,
  type SessionTurn,
} from '@ptc/sandbox/backend'
import type { CodeRunError, CodeRunLimits, CodeRunRequest, CodeRunResult, CodeRuntime } from '@ptc/sandbox'
import type { ResumeRunRequest, SuspendedRun } from '@ptc/sandbox/session'
import { randomBytes } from 'node:crypto'
import type { SessionMemory } from './engine/session-memory.js'
import { checkDurable, DurableRuns } from './durable-runs.js'
import type { Engines } from './host/engines.js'
import { RunHost } from './host/run-host.js'
import { InlineEngines } from './host/inline.js'
import { WorkerPool } from './host/pool.js'
import { CEILINGS, checkSessionOptions, engineSettings, type QuickJSRuntimeOptions } from './runtime-options.js'
import { SessionSeal, sessionLeft, sizeOf, storeSpill } from './runtime-sessions.js'
import { HOST_FAILED, wallBeforeStart } from './messages.js'

// `index.ts` and the tests take them from here.

/**
 * The QuickJS `CodeRuntime` (exported for tests, which inject their engines; the public face is
 * `createQuickJSRuntime`).
 */
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
  readonly #seal: SessionSeal
  readonly #durable: DurableRuns
  #disposed = false
  #disposing: Promise<void> | undefined

  constructor(options: QuickJSRuntimeOptions, engines?: Engines) {
    this.#defaults = Object.freeze(resolveLimits(options.limits, DEFAULT_LIMITS, CEILINGS))
    const { store, secret, suspendAfterMs, storeWaitMs, claimMs, ...sessionLimits } = options.sessions ?? {}
    const limits = Object.freeze(resolveSessionLimits(sessionLimits))
    checkSessionOptions(options)
    const key = options.secret ?? secret ?? randomBytes(32)
    const variant = options.variant ?? 'quickjs'
    this.#seal = new SessionSeal(variant, key)
    const holder = claimHolder('quickjs')
    const spill =
      store === undefined
        ? undefined
        : storeSpill(store, { suspendAfterMs, storeWaitMs, claimMs }, limits, holder, this.#seal)
    // A state let go of (replaced by its run's next capture, expired, evicted, saved) gives its buffer back to the
    // engines.
    this.#sessions = new SessionTable(limits, (memory) => this.#engines.recycle?.(memory), spill)
    // Every option is checked before anything is built.
    const { inline, poolSize, grace, concurrent, maxExtraRuns } = engineSettings(options, engines)
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
    this.#durable = new DurableRuns({
      defaults: this.#defaults,
      engines: this.#engines,
      gate: this.#gate,
      grace,
      live: this.#live,
      sessions: this.#sessions,
      variant,
      secret: key,
      disposed: () => this.#disposed,
    })
    // Runs past a slice of CPU hold workers of their own: their places go to fresh runs.
    if (this.#engines instanceof WorkerPool)
      this.#engines.lendTo(
        (places) => this.#gate.lend(places),
        () => this.#gate.queued,
      )
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
              ? { kind: 'timeout', message: wallBeforeStart(limits.wallMs, turn.message) }
              : { kind: 'limit', message: turn.message }
        return { logs: [], error, stats: { cpuMs: 0, wallMs, queueMs: wallMs, subCalls: 0 } }
      }
    }
    const host = new RunHost(request, accepted, this.#grace)
    // Admitted as `dispose()` began (it closed the gate, but this run already held a place).
    if (this.#disposed) host.stop('abort')
    else if (request.signal?.aborted) host.stop('abort')
    // Whatever happens on the host side, the session is not left taken.
    const taken =
      turn?.ok === true
        ? new Lifetime(turn, (t) => this.#sessions.give(t.entry, { reason: HOST_FAILED }, t.fresh), 'the session')
        : undefined
    try {
      if (!host.ended) {
        this.#live.add(host)
        const memory = taken?.value.entry.state
        const maxBytes = this.#sessions.limits.maxSessionBytes
        const session =
          taken === undefined ? undefined : memory === undefined ? { maxBytes } : { id: memory.id, memory, maxBytes }
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
        const entry = taken?.value.entry
        const session =
          entry !== undefined
            ? { key: entry.key, runs: entry.runs, ...(this.#sessions.holdsInStore && { stored: true as const }) }
            : undefined
        result.suspended = await this.#durable.suspended(durable, host, {
          code: request.code,
          language: request.language ?? 'typescript',
          bindings,
          limits,
          logs: result.logs,
          ...(session !== undefined && { session }),
        })
      }
      if (taken !== undefined && result.suspended !== undefined && durable !== undefined) {
        // The session's state goes on with the suspended run: held for its resume.
        const holdMs = durable.holdMs ?? DEFAULT_HOLD_MS
        result.session = await taken.end((t) =>
          this.#sessions.park(t.entry, parkedHolder(durable.key), holdMs, t.fresh),
        )
      } else if (taken !== undefined) {
        const left = sessionLeft(host, result, this.#sessions.limits.maxSessionBytes)
        result.session = taken.end((t) => this.#sessions.give(t.entry, left, t.fresh, t.note))
      }
      return result
    } finally {
      this.#live.delete(host)
      accepted.release()
      taken?.dispose()
    }
  }

  /** See `DurableRuns.openRun`. */
  openRun(key: string, state: Uint8Array): Promise<SuspendedRun> {
    return this.#durable.openRun(key, state)
  }

  /** See `DurableRuns.resumeRun`. */
  resumeRun(run: SuspendedRun, request: ResumeRunRequest): Promise<CodeRunResult> {
    return this.#durable.resumeRun(run, request)
  }

  /** See `DurableRuns.dropRun`. */
  dropRun(run: SuspendedRun): Promise<void> {
    return this.#durable.dropRun(run)
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
    const sealed =
      saved === undefined ? undefined : await this.#seal.seal(key, { memory: saved.state, runs: saved.runs })
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
    const { memory, runs } = await this.#seal.open(checkSessionKey(key), snapshot)
    await this.#sessions.attach(key, memory, sizeOf(memory), runs)
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
