import { validateBindings } from './bindings.js'
import { SandboxUsageError } from './errors.js'
import type { GatePlace, GateRefusal, RunGate } from './gate.js'
import { utf8ByteLength } from './ledger.js'
import { resolveLimits, type LimitCeilings } from './limits.js'
import { programFromStripped, type PreparedProgram } from './program.js'
import { INLINE_STRIP_UNITS, prepareOffThread, stripTypeScript, type StripResult } from './strip.js'
import type { CodeRunError, CodeRunLimits, CodeRunRequest, CodeRunResult } from './types.js'
import { stopError } from './stop.js'
import { whenAborted } from './abort.js'

/** The longest session key (`CodeRunRequest.session`). */
export const MAX_SESSION_KEY = 256

/** `key` when it is a session key (a string of 1 to `MAX_SESSION_KEY` characters); else `SandboxUsageError`. */
export function checkSessionKey(key: unknown): string {
  if (typeof key !== 'string' || key.length === 0 || key.length > MAX_SESSION_KEY) {
    throw new SandboxUsageError(`a session key must be a string of 1 to ${MAX_SESSION_KEY} characters`)
  }
  return key
}

/** `tenant` when it is a tenant key (`CodeRunRequest.tenant`: a string); else `SandboxUsageError`. */
function checkTenant(tenant: unknown): string {
  if (typeof tenant !== 'string') throw new SandboxUsageError('tenant must be a string')
  return tenant
}

/** A run admitted into a backend: what it starts, with the clock that started at the `run()` call. */
export interface AdmittedRun {
  readonly ok: true
  readonly bindings: readonly string[]
  readonly limits: CodeRunLimits
  readonly program: PreparedProgram
  /** `performance.now()` at the `run()` call: the run's wall clock starts here. */
  readonly startedAt: number
  /** `startedAt + limits.wallMs`: the wall ceiling, queueing included. */
  readonly deadline: number
  /** Gives the run's place in the gate back; call it once the run has ended. */
  release(): void
}

/** A checked run request: what a backend starts, or the result of a program that never starts. */
export type AcceptedRun = AdmittedRun | { readonly ok: false; readonly result: CodeRunResult }

/** How a backend takes its runs (`acceptRun`). */
export interface AcceptOptions {
  /**
   * The backend's engine thread makes a session program's source from its `body` (QuickJS workers): a
   * long session program is then not parsed here, nor on a worker for it.
   */
  readonly sessionSourceOnEngine?: boolean
  /** What the backend cannot give (see `resolveLimits`). */
  readonly ceilings?: LimitCeilings
}

/**
 * The checks and the waiting every backend does before a run, in this order, with the run's wall
 * clock running from the call:
 * 1. misuse (not a request, no code, no `call`, an unknown language, bad bindings or limits) throws
 *    `SandboxUsageError`;
 * 2. a program over `maxProgramBytes` ends as `limit`, before any other work on it;
 * 3. the run takes a place in `gate` (when given; in the queue of its `tenant`), waiting at most until its wall
 *    deadline: the work on its program comes after, so a full gate refuses a run at once, and no program is
 *    prepared for a run that waits or is refused (a flood of long programs costs the host nothing past the gate's
 *    size);
 * 4. TypeScript is stripped and the program wrapped; a program longer than `INLINE_STRIP_UNITS` is
 *    stripped, and a session program's source made (a parse of the whole program), on a worker thread,
 *    never on this one; a syntax error ends as `syntax` (and gives its place back).
 * A run whose signal aborts, or whose deadline passes, during 3 or 4 ends as `abort` or `timeout`.
 */
export async function acceptRun(
  request: CodeRunRequest,
  defaults: CodeRunLimits,
  gate?: RunGate,
  options?: AcceptOptions,
): Promise<AcceptedRun> {
  const startedAt = performance.now()
  if (request === null || typeof request !== 'object') throw new SandboxUsageError('the run request must be an object')
  if (typeof request.code !== 'string') throw new SandboxUsageError('code must be a string')
  if (typeof request.call !== 'function') throw new SandboxUsageError('call must be a function')
  if (request.language !== undefined && request.language !== 'typescript' && request.language !== 'javascript') {
    throw new SandboxUsageError('language must be "typescript" or "javascript"')
  }
  const session = request.session === undefined ? undefined : checkSessionKey(request.session)
  const tenant = request.tenant === undefined ? undefined : checkTenant(request.tenant)
  const bindings = validateBindings(request.bindings)
  const limits = resolveLimits(request.limits, defaults, options?.ceilings)
  const deadline = startedAt + limits.wallMs
  const { code, signal } = request
  const refuse = (error: CodeRunError): AcceptedRun => {
    const wallMs = performance.now() - startedAt
    return { ok: false, result: { logs: [], error, stats: { cpuMs: 0, wallMs, queueMs: wallMs, subCalls: 0 } } }
  }

  const bytes = programBytes(code, limits.maxProgramBytes)
  if (typeof bytes === 'string') return refuse({ kind: 'limit', message: bytes })
  if (signal?.aborted) return refuse(refusal('abort', limits, startedAt, gate))

  let place: GatePlace | undefined
  if (gate !== undefined) {
    const entered = await gate.enter(deadline, signal, bytes, tenant)
    if (!entered.ok) return refuse(refusal(entered.reason, limits, startedAt, gate))
    place = entered
  }
  const release = (): void => place?.release()

  const typescript = request.language !== 'javascript'
  const sessionSourceHere = session !== undefined && options?.sessionSourceOnEngine !== true
  let stripped: StripResult
  let sessionSource: string | undefined
  if (code.length > INLINE_STRIP_UNITS && (typescript || sessionSourceHere)) {
    // A runtime disposed meanwhile (its gate closed) stops the preparation too: no worker goes on for nobody.
    const waiting = waitSignal(deadline, signal, gate?.closing)
    const done = await prepareOffThread({ code, typescript, session: sessionSourceHere }, waiting.signal)
    waiting.dispose()
    if (done === undefined) {
      release()
      return refuse(
        refusal(
          gate?.closing.aborted === true ? 'closed' : signal?.aborted === true ? 'abort' : 'wall',
          limits,
          startedAt,
          gate,
        ),
      )
    }
    stripped = done.stripped
    sessionSource = done.source
  } else {
    stripped = typescript ? stripTypeScript(code) : { ok: true, code }
  }
  const prepared = programFromStripped(code, stripped, {
    session: session !== undefined,
    ...(sessionSource === undefined ? {} : { sessionSource }),
  })
  if (!prepared.ok) {
    release()
    return refuse(prepared.error)
  }
  return { ok: true, bindings, limits, program: prepared.program, startedAt, deadline, release }
}

/** The UTF-8 size of a program of at most `maxBytes`, or the `limit` message of a longer one. */
function programBytes(code: string, maxBytes: number): number | string {
  // UTF-8 never takes fewer bytes than UTF-16 units: a long string is refused without encoding it.
  if (code.length > maxBytes)
    return `the program has more than ${maxBytes} bytes, over the maxProgramBytes limit of ${maxBytes}`
  const bytes = utf8ByteLength(code)
  return bytes > maxBytes ? `the program has ${bytes} bytes, over the maxProgramBytes limit of ${maxBytes}` : bytes
}

function refusal(
  reason: GateRefusal,
  limits: CodeRunLimits,
  startedAt: number,
  gate: RunGate | undefined,
): CodeRunError {
  switch (reason) {
    case 'abort':
      return stopError('abort', limits)
    case 'closed':
      return { kind: 'abort', message: 'the run was aborted: the runtime is disposed' }
    case 'wall':
      return {
        kind: 'timeout',
        message:
          `wall-clock limit of ${limits.wallMs} ms exceeded before the program started ` +
          `(${Math.round(performance.now() - startedAt)} ms preparing and waiting for an engine)`,
      }
    case 'queue-full':
      return {
        kind: 'limit',
        message:
          `the runtime's run queue is full (${gate?.active ?? 0} runs running, ${gate?.queued ?? 0} waiting ` +
          `with ${gate?.queuedBytes ?? 0} bytes of programs; it holds at most ${gate?.maxQueued ?? 0} runs and ${gate?.maxQueuedBytes ?? 0} bytes)`,
      }
  }
}

/**
 * A signal that aborts when one of `signals` does or when `deadline` passes (its timer keeps the process
 * alive meanwhile).
 */
function waitSignal(
  deadline: number,
  ...signals: (AbortSignal | undefined)[]
): { signal: AbortSignal; dispose(): void } {
  const controller = new AbortController()
  const abort = (): void => controller.abort()
  const timer = setTimeout(abort, Math.max(0, deadline - performance.now()))
  const stops = signals.flatMap((signal) => (signal === undefined ? [] : [whenAborted(signal, abort)]))
  return {
    signal: controller.signal,
    dispose: () => {
      clearTimeout(timer)
      for (const stop of stops) stop()
    },
  }
}
