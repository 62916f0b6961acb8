import type { QuickJSContext, QuickJSHandle } from 'quickjs-emscripten-core'
import type { CodeRunError, CodeRunLimits } from '@ptc/sandbox'
import { FinishKind, maxErrorChars, stopError, type GuestErrorInfo, type OutputLedger } from '@ptc/sandbox/backend'
import type { LoadedModule } from './module.js'
import type { EngineRunError } from './protocol.js'
import { engineFailed, nativeStackOverflow, UNREADABLE_ERROR } from '../messages.js'

/**
 * The thread's own stack ran out inside the engine: some of QuickJS's recursions (its parser, JSON, array
 * joins) take more of it than of the stack QuickJS counts against MAX_STACK_BYTES, so V8's limit comes
 * first (inline on the calling thread's 1 MB, in a worker on its 4 MB). The program caused it: an exception
 * of the program's (uncatchable there, and the module is dropped), not a crash of the engine.
 */
const NATIVE_STACK_OVERFLOW = /Maximum call stack size exceeded/
/** What the prelude reports for a thrown value it could not describe (see `GUEST_PRELUDE`). */
export const UNFORMATTABLE = '[unformattable thrown value]'

/** QuickJS's out-of-memory error. */
export function isOutOfMemory(info: GuestErrorInfo): boolean {
  return info.name === 'InternalError' && /out of memory/i.test(info.message)
}

/**
 * The name, message and stack of a guest error, as the host may show them: no more of a message than
 * `maxOutputBytes` allows (`maxErrorChars`).
 */
export function guestErrorInfo(ctx: QuickJSContext, handle: QuickJSHandle, maxOutputBytes: number): GuestErrorInfo {
  const read = (key: string): string | undefined => {
    try {
      const h = ctx.getProp(handle, key)
      const v = ctx.typeof(h) === 'string' ? ctx.getString(h) : undefined
      h.dispose()
      return v
    } catch {
      return undefined
    }
  }
  const name = read('name')
  const message = read('message')
  // Neither could be read: out of memory, reading a property can fail (each handle takes heap). An
  // anonymous description lets the run call it the memory limit when the heap could not grow.
  if (name === undefined && message === undefined) return { message: UNFORMATTABLE }
  const info: GuestErrorInfo = { name: name ?? 'Error', message: message ?? '' }
  // As the prelude's `describe` does: no more of a message than the host could show leaves this thread.
  const maxChars = maxErrorChars(maxOutputBytes)
  if (info.message.length > maxChars) {
    info.cutChars = info.message.length - maxChars
    info.message = info.message.slice(0, maxChars)
  }
  const stack = read('stack')
  if (stack !== undefined) info.stack = stack
  return info
}

/** The error of a program whose evaluation threw (`info`): a syntax error, or the memory ceiling. */
export function evaluationError(info: GuestErrorInfo, limits: CodeRunLimits): EngineRunError {
  // Evaluating the wrapper also declares a session program's globals: a TypeError there (a frozen global
  // object) is the program's runtime error, not a syntax one.
  const kind = info.name === 'SyntaxError' ? 'syntax' : 'exception'
  return isOutOfMemory(info) ? stopError('memory', limits) : { kind, info }
}

/**
 * What the prelude's `finish(kind, payload)` ends the run with. `outOfMemory` tells a guest error that is
 * the memory ceiling.
 */
export function finishedResult(
  kind: number,
  payload: string,
  ledger: OutputLedger,
  limits: CodeRunLimits,
  outOfMemory: (info: GuestErrorInfo) => boolean,
): { valueJson?: string; error?: EngineRunError } {
  if (kind === FinishKind.Undefined) return {}
  if (kind === FinishKind.Value) {
    return ledger.value(payload)
      ? { valueJson: payload }
      : { error: { kind: 'output-limit', message: ledger.describeOverflow('value') } }
  }
  if (kind === FinishKind.InvalidValue) return { error: { kind: 'invalid-output', message: payload } }
  let info: GuestErrorInfo
  try {
    info = JSON.parse(payload) as GuestErrorInfo
  } catch {
    info = { message: UNREADABLE_ERROR }
  }
  // Out of memory, QuickJS may fail to allocate the error itself and throw `null`.
  return { error: outOfMemory(info) ? stopError('memory', limits) : { kind: 'exception', info } }
}

/** The error of a run whose engine threw on the host's side (`EngineRun`'s trap) with `message`. */
export function engineFailure(message: string, limits: CodeRunLimits): CodeRunError {
  return /memory|OOM|enlarge/i.test(message)
    ? stopError('memory', limits)
    : NATIVE_STACK_OVERFLOW.test(message)
      ? { kind: 'exception', message: nativeStackOverflow(message) }
      : { kind: 'crash', message: engineFailed(message) }
}

/** How one run tells which of its guest's errors are the memory ceiling. */
export class RunErrors {
  readonly #loaded: LoadedModule
  readonly #limits: CodeRunLimits
  #refusedAtStart = 0

  constructor(loaded: LoadedModule, limits: CodeRunLimits) {
    this.#loaded = loaded
    this.#limits = limits
  }

  /** The run starts on the engine now: the heap growths refused from here are its own (`heapRefused`). */
  started(): void {
    this.#refusedAtStart = this.#loaded.growth.refused
  }

  /** WebAssembly refused to grow the module's memory (its cap) since this run started. */
  heapRefused(): boolean {
    return this.#loaded.growth.refused > this.#refusedAtStart
  }

  /**
   * Whether a guest error is the memory ceiling: QuickJS's out-of-memory error, or — when WebAssembly
   * refused to grow the heap during this run — what is left when QuickJS could not even allocate that
   * error (it throws `null`) or the prelude could not describe it.
   */
  outOfMemory(info: GuestErrorInfo): boolean {
    if (isOutOfMemory(info)) return true
    const anonymous = info.name === undefined && (info.message === 'null' || info.message === UNFORMATTABLE)
    return anonymous && this.heapRefused()
  }

  /**
   * The guest went quiet without calling `finish` and without a sub-call pending. Out of memory,
   * QuickJS may fail to queue the job that would report the outcome (bellard: the promise settled
   * unreported; quickjs-ng: it stays pending, or `start` itself failed): with the heap at its cap that
   * is the memory limit. A settled-but-unreported rejection of `program` is reported as what it was.
   */
  unreported(program: QuickJSHandle | undefined, context: () => QuickJSContext): EngineRunError | undefined {
    if (program === undefined) return this.heapRefused() ? stopError('memory', this.#limits) : undefined
    const state = context().getPromiseState(program)
    if (state.type === 'pending') return this.heapRefused() ? stopError('memory', this.#limits) : undefined
    if (state.type === 'fulfilled') return stopError('memory', this.#limits)
    const info = guestErrorInfo(context(), state.error, this.#limits.maxOutputBytes)
    return this.outOfMemory(info) ? stopError('memory', this.#limits) : { kind: 'exception', info }
  }
}
