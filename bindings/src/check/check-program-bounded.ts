import type { ChildProcess } from 'node:child_process'
import { _givesDeclarations, _readCatalog, type CatalogSdk } from './catalog.js'
import type { CheckProgramOptions, CheckProgramResult } from './check-program.js'
import { _startChecker, type _CatalogData, type _ChildMessage, type _ChildRequest } from './child.js'
import { CheckError } from './errors.js'

/** The bounds of one check in its own process. */
export interface CheckBounds {
  /**
   * Wall-clock milliseconds for checking the program, from when the checker has started (`typescript` loaded).
   * The start itself may take the longer of this and a minute.
   */
  readonly timeoutMs?: number
  /** Megabytes of V8 heap (old generation) for the checker's process. `typescript` and its lib files use about 40. */
  readonly maxMemoryMb?: number
}

/** Options of {@link checkProgramBounded}. */
export interface CheckProgramBoundedOptions extends CheckProgramOptions, CheckBounds {
  /** Stops the check: it rejects with the signal's reason. */
  readonly signal?: AbortSignal
}

/** The bounds a check has unless told otherwise. */
export const DEFAULT_CHECK_BOUNDS: Readonly<Required<CheckBounds>> = Object.freeze({
  timeoutMs: 20_000,
  maxMemoryMb: 1024,
})

/** The longest delay a Node timer holds; and what a V8 heap can be told (4 TiB, in MB). */
const MAX_TIMEOUT_MS = 2 ** 31 - 1
const MAX_MEMORY_MB = 4 * 1024 * 1024
/** The least time the checker's process has to start: a loaded machine takes seconds to load `typescript`. */
const MIN_START_MS = 60_000
/** How much of the checker's stderr is kept: V8's out-of-memory report is in its last lines. */
const STDERR_TAIL = 16_384

function bound(name: keyof CheckBounds, value: number | undefined, max: number): number {
  if (value === undefined) return DEFAULT_CHECK_BOUNDS[name]
  if (!Number.isSafeInteger(value) || value <= 0 || value > max) {
    throw new RangeError(`${name} must be a whole number from 1 to ${max}, not ${String(value)}`)
  }
  return value
}

const isStackOverflow = (error: unknown): boolean =>
  error instanceof RangeError && /Maximum call stack size exceeded/.test(error.message)

/** The checker's process and what goes with it (its deadline, the abort listener); `dispose` ends them all. */
class CheckerScope {
  readonly #cleanups: (() => void)[] = []
  #timer: NodeJS.Timeout | undefined

  add(cleanup: () => void): void {
    this.#cleanups.push(cleanup)
  }

  /** Replaces the deadline: first the start's, then the check's. */
  deadline(ms: number, onTimeout: () => void): void {
    clearTimeout(this.#timer)
    this.#timer = setTimeout(onTimeout, ms)
  }

  dispose(): void {
    clearTimeout(this.#timer)
    for (const cleanup of this.#cleanups.splice(0).reverse()) cleanup()
  }
}

function catalogData(sdk: CatalogSdk): _CatalogData {
  return {
    names: sdk.catalog.names().filter((name) => typeof name === 'string'),
    gives: _givesDeclarations(sdk.catalog) ? 'declaration' : 'tool',
    ...(sdk.searchTools === undefined ? {} : { searchTools: sdk.searchTools }),
    ...(sdk.render === undefined ? {} : { render: { ...sdk.render } }),
  }
}

/** Why the checker's process ended without an answer: out of memory (V8 aborts it), or something else. */
function exitError(code: number | null, signal: NodeJS.Signals | null, stderr: string, maxMemoryMb: number): Error {
  const outOfMemory = /heap out of memory|Reached heap limit/.test(stderr)
  if (outOfMemory) return new CheckError('CHECK_MEMORY', { limit: maxMemoryMb })
  const last = stderr.trim().split('\n').at(-1) ?? ''
  const how = signal === null ? `exit code ${code}` : `signal ${signal}`
  return new CheckError('CHECK_FAILED', { detail: last === '' ? how : `${how}: ${last}` })
}

/**
 * {@link checkProgram} in a process of its own, bounded in time and heap: the caller's thread stays free, and a
 * program that makes the checker run away (types that expand without end) is stopped at its bound. Resolves with
 * what `checkProgram` returns; rejects with a `CheckError` (`CHECK_TIMEOUT` or `CHECK_MEMORY`, naming the option to
 * raise; `CHECK_STACK`; `CHECK_FAILED`), with the signal's reason when aborted, or with what the check threw. A
 * catalog is read on the caller's thread: `names()` at once, `tool` for the names the checker asks for. Each check
 * starts a process and loads `typescript` in it: it costs about what the first `checkProgram` of a process costs.
 * @throws RangeError (synchronously) when a bound is not a whole number from 1 (a timeout at most 2^31-1 ms).
 */
export function checkProgramBounded(
  code: string,
  sdk: string | CatalogSdk,
  options: CheckProgramBoundedOptions = {},
): Promise<CheckProgramResult> {
  const timeoutMs = bound('timeoutMs', options.timeoutMs, MAX_TIMEOUT_MS)
  const maxMemoryMb = bound('maxMemoryMb', options.maxMemoryMb, MAX_MEMORY_MB)
  const { signal } = options
  if (signal?.aborted === true) return Promise.reject(signal.reason)
  let request: _ChildRequest
  try {
    const language = options.language === undefined ? {} : { language: options.language }
    request = { code, sdk: typeof sdk === 'string' ? sdk : catalogData(sdk), options: language }
  } catch (error) {
    return Promise.reject(error)
  }
  const scope = new CheckerScope()
  return new Promise<CheckProgramResult>((resolve, reject) => {
    const settle = (outcome: { result: CheckProgramResult } | { error: unknown }): void => {
      scope.dispose()
      if ('result' in outcome) resolve(outcome.result)
      else reject(outcome.error)
    }
    const startMs = Math.max(timeoutMs, MIN_START_MS)
    const notStarted = new CheckError('CHECK_FAILED', { detail: `it did not start in ${startMs} ms` })
    scope.deadline(startMs, () => settle({ error: notStarted }))
    const child: ChildProcess = _startChecker(maxMemoryMb)
    scope.add(() => child.kill('SIGKILL'))
    let stderr = ''
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-STDERR_TAIL)))
    child.on('message', (message: _ChildMessage) => {
      if ('ready' in message) {
        scope.deadline(timeoutMs, () => settle({ error: new CheckError('CHECK_TIMEOUT', { limit: timeoutMs }) }))
      } else if ('need' in message) {
        if (typeof sdk !== 'string') answer(sdk, message.need, child, settle)
      } else if ('error' in message && isStackOverflow(message.error)) {
        settle({ error: new CheckError('CHECK_STACK', { cause: message.error }) })
      } else settle(message)
    })
    child.on('error', (error) => settle({ error }))
    // 'close' (not 'exit'): stderr has been read to its end.
    child.on('close', (exitCode, exitSignal) => settle({ error: exitError(exitCode, exitSignal, stderr, maxMemoryMb) }))
    if (signal !== undefined) {
      const onAbort = (): void => settle({ error: signal.reason })
      signal.addEventListener('abort', onAbort, { once: true })
      scope.add(() => signal.removeEventListener('abort', onAbort))
    }
    // A failed send means the process ended: 'close' says why.
    child.send(request, () => undefined)
  })
}

/** Sends the checker what it needs of the caller's catalog; what the catalog throws ends the check. */
function answer(
  sdk: CatalogSdk,
  need: readonly string[],
  child: ChildProcess,
  settle: (outcome: { error: unknown }) => void,
): void {
  try {
    child.send({ found: need.map((name) => _readCatalog(sdk.catalog, name)) }, () => undefined)
  } catch (error) {
    settle({ error })
  }
}
