import {
  SandboxUsageError,
  type CodeRunError,
  type CodeRunLimits,
  type CodeRunRequest,
  type CodeRunResult,
  type JsonValue,
} from '@ptc/sandbox'
import {
  DEFAULT_HOLD_MS,
  acceptRun,
  checkSessionKey,
  Lifetime,
  parkedHolder,
  stopError,
  type ParkedHostCall,
  type RunGate,
  type SessionTable,
  type SessionTurn,
} from '@ptc/sandbox/backend'
import {
  openSnapshotAsync,
  sealSnapshotAsync,
  SessionStoreError,
  SnapshotError,
  type DurableRun,
  type ParkedCall,
  type ResumeRunRequest,
  type SnapshotKey,
  type SuspendedRun,
  type SuspendedRunState,
} from '@ptc/sandbox/session'
import type { QuickJSVariantName } from './engine/module.js'
import type { SessionMemory } from './engine/session-memory.js'
import type { Engines } from './host/engines.js'
import { RunHost } from './host/run-host.js'
import { decodeRun, encodeRun, sessionBuild, type SavedRun } from './host/session-snapshot.js'
import { CEILINGS } from './runtime-options.js'
import { sessionLeft } from './runtime-sessions.js'
import { RESUME_HOST_FAILED, SESSION_NOT_TAKEN, wallBeforeResume } from './messages.js'

/** What durable runs use of their runtime (`QuickJSCodeRuntime`). */
export interface RuntimeParts {
  readonly defaults: Readonly<CodeRunLimits>
  readonly engines: Engines
  readonly gate: RunGate
  readonly grace: number
  readonly live: Set<RunHost>
  readonly sessions: SessionTable<SessionMemory>
  readonly variant: QuickJSVariantName
  readonly secret: SnapshotKey
  /** `dispose()` began. */
  disposed(): boolean
}

/**
 * A runtime's durable runs (`CodeRunRequest.durable`): the sealed state of one that suspended, and how it is
 * opened, resumed or dropped, here or in another process of the same build with the same secret.
 */
export class DurableRuns {
  readonly #parts: RuntimeParts
  /** Runs `openRun` opened and `resumeRun` has not taken yet. */
  readonly #opened = new WeakMap<SuspendedRun, SavedRun>()

  constructor(parts: RuntimeParts) {
    this.#parts = parts
  }

  /** The sealed state and parked calls of a run that suspended (`host.suspended`). */
  async suspended(
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
      { build: await sessionBuild(this.#parts.variant), session: runIdentity(durable.key) },
      this.#parts.secret,
    )
    return { state, parked: s.parked.map(parkedCall) }
  }

  /**
   * Opens the sealed state of a suspended run (`CodeRunResult.suspended.state`) bound to `key`, from
   * this process or another of the same build with the same secret. Throws `SnapshotError` for bytes
   * that are tampered with, truncated, foreign or bound to another key; nothing runs until `resumeRun`.
   */
  async openRun(key: string, state: Uint8Array): Promise<SuspendedRun> {
    if (this.#parts.disposed()) throw new SandboxUsageError('the runtime is disposed', 'SANDBOX_DISPOSED')
    const payload = await openSnapshotAsync(
      state,
      { build: await sessionBuild(this.#parts.variant), session: runIdentity(checkSessionKey(key)) },
      this.#parts.secret,
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
    if (this.#parts.disposed()) throw new SandboxUsageError('the runtime is disposed', 'SANDBOX_DISPOSED')
    const saved = this.#opened.get(run)
    if (saved === undefined) throw new SandboxUsageError("resumeRun takes a run from this runtime's openRun, once")
    if (request === null || typeof request !== 'object' || typeof request.call !== 'function')
      throw new SandboxUsageError('resumeRun needs { call }')
    if (saved.session?.stored === true && !this.#parts.sessions.holdsInStore) {
      // Resumed here, it would take a session of this runtime's own, and the one in the store would stay held for it.
      throw new SandboxUsageError(
        `this program ran in sandbox session ${JSON.stringify(saved.session.key)}, which waits for it in a session ` +
          'store: resume it on a runtime with that store (sessions.store); nothing ran',
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
    // A run that ends here without going on (refused, out of time) holds its session no more: it goes on from
    // before it.
    const unhold = async (): Promise<void> => {
      if (session !== undefined)
        await this.#parts.sessions.unpark(session.key, parkedHolder(run.key)).catch(() => undefined)
    }
    const accepted = await acceptRun(again, this.#parts.defaults, this.#parts.gate, { ceilings: CEILINGS })
    if (!accepted.ok) {
      await unhold()
      return accepted.result
    }
    // A session run: its session, held for this resume (here, or in the store for whichever process resumes it).
    let turn: SessionTurn<SessionMemory> | undefined
    let wentOn: string | undefined
    if (session !== undefined) {
      turn = await this.#parts.sessions.take(
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
          `${turn.message.replace(/; the program did not run.*$/, '')}: the run did not go on, and the session is ` +
            'still held for it',
        )
      }
      if (!turn.ok && turn.reason !== undefined) {
        await unhold()
        accepted.release()
        const wallMs = performance.now() - accepted.startedAt
        const error: CodeRunError =
          turn.reason === 'abort'
            ? stopError('abort', saved.limits)
            : { kind: 'timeout', message: wallBeforeResume(turn.message) }
        return { logs: [], error, stats: { cpuMs: saved.cpuMs, wallMs, queueMs: wallMs, subCalls: saved.subCalls } }
      }
      // The session went on without this run (its hold ended): the run goes on, its state is not the session's.
      if (!turn.ok) wentOn = turn.message
      else if (turn.entry.state === undefined && turn.entry.runs === 0) turn.entry.runs = session.runs
    }
    const clock = { ...accepted, limits: saved.limits }
    const host = new RunHost(again, clock, this.#parts.grace, saved.subCalls - saved.parked.length)
    if (this.#parts.disposed() || signal?.aborted === true) host.stop('abort')
    // Whatever happens on the host side, the session is not left taken.
    const sessions = this.#parts.sessions
    const taken =
      turn?.ok === true
        ? new Lifetime(turn, (t) => sessions.give(t.entry, { reason: RESUME_HOST_FAILED }, false), 'the session')
        : undefined
    try {
      if (!host.ended) {
        this.#parts.live.add(host)
        const resume = {
          memory: saved.memory,
          parked: saved.parked.map((c): [number, string, string] => [c.id, c.name, c.argsJson]),
          cpuMs: saved.cpuMs,
          subCalls: saved.subCalls - saved.parked.length,
          outputBytes: saved.outputBytes,
        }
        const maxBytes = sessions.limits.maxSessionBytes
        this.#parts.engines.execute(host, {
          source: '',
          bindings: saved.bindings,
          limits: saved.limits,
          durable: { maxBytes },
          ...(taken !== undefined && { session: { maxBytes } }),
          resume,
        })
      }
      const result = await host.result
      if (host.suspended !== undefined) {
        const entry = taken?.value.entry
        const held = entry !== undefined ? { key: entry.key, runs: entry.runs } : undefined
        result.suspended = await this.suspended(durable, host, {
          code: saved.code,
          language: saved.language,
          bindings: saved.bindings,
          limits: saved.limits,
          logs: [...saved.logs, ...result.logs],
          ...(held !== undefined && { session: held }),
        })
      }
      if (taken !== undefined) {
        const holdMs = durable.holdMs ?? DEFAULT_HOLD_MS
        result.session =
          result.suspended !== undefined
            ? await taken.end((t) => sessions.park(t.entry, parkedHolder(durable.key), holdMs, false))
            : taken.end((t) =>
                sessions.give(t.entry, sessionLeft(host, result, sessions.limits.maxSessionBytes), false),
              )
      } else if (session !== undefined) {
        result.session = {
          key: session.key,
          fresh: false,
          kept: false,
          bytes: 0,
          runs: session.runs + 1,
          note: wentOn ?? SESSION_NOT_TAKEN,
        }
      }
      return result
    } finally {
      this.#parts.live.delete(host)
      accepted.release()
      taken?.dispose()
    }
  }

  /**
   * Drops a run `openRun` opened instead of resuming it: the session it held, if it ran in one, goes on from
   * its state before the run (here, or from the session store for whichever process runs it next).
   */
  async dropRun(run: SuspendedRun): Promise<void> {
    if (this.#parts.disposed()) throw new SandboxUsageError('the runtime is disposed', 'SANDBOX_DISPOSED')
    const saved = this.#opened.get(run)
    if (saved === undefined) throw new SandboxUsageError("dropRun takes a run from this runtime's openRun, once")
    this.#opened.delete(run)
    if (saved.session !== undefined) await this.#parts.sessions.unpark(saved.session.key, parkedHolder(run.key))
  }
}

/** The identity a suspended run's state is sealed under: never a session's (those are plain keys). */
function runIdentity(key: string): string {
  return `run\u0000${key}`
}

export function checkDurable(durable: unknown): DurableRun {
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
