/**
 * Long runs (`PtcExecutorOptions.longRuns`): a `run_code` program still running after `returnAfterMs`
 * goes on in the background, and the call returns the output so far with a handle; `run_code` with
 * `{ wait: handle }` returns what came since, and the outcome once the program ended. The limits are
 * those of the one run (its wall, CPU, output and sub-call budgets cover every part).
 */
import { MAX_TIMER_MS, type CodeRunResult } from '@ptc/sandbox'
import { ToolArgsError, type JsonValue, type ToolRunContext, type UserMessage } from '@ptc/tools'
import { CodeRunFailedError } from './errors.js'

/** Options of long runs. */
export interface LongRunOptions {
  /** How long a `run_code` call (and each `wait`) waits for the program before it returns a part. */
  returnAfterMs: number
  /**
   * Programs running in the background at most (default 16); past it, a call waits for its program's
   * end. Ended programs whose last part nobody fetched are kept up to as many (the oldest goes first).
   */
  maxBackgroundRuns?: number
  /** How long an ended program's last part is kept for its `wait` (default 10 minutes). */
  keepMs?: number
}

/**
 * What a run produced that no part has returned yet: its log entries, and what its sub-calls brought along (deferred
 * contexts, images, a concluding success), which goes with the next part: the first part's call had settled when a
 * later sub-call deferred them, and they were dropped.
 */
export class LogStream {
  #entries: string[] = []
  #contexts: UserMessage[] = []
  #concluded = false
  push(text: string): void {
    this.#entries.push(text)
  }
  take(): string[] {
    const taken = this.#entries
    this.#entries = []
    return taken
  }
  /** The context of the run's sub-calls: deferred contexts and conclusions wait here for the next part. */
  context(ctx: ToolRunContext): ToolRunContext {
    return Object.freeze({
      ...ctx,
      deferContext: (message: UserMessage) => void this.#contexts.push(message),
      concludeTurn: () => void (this.#concluded = true),
    })
  }
  /** Hands what the sub-calls brought along since the last part to `ctx`, the call that returns this part. */
  forward(ctx: ToolRunContext): void {
    for (const message of this.#contexts.splice(0)) ctx.deferContext(message)
    if (this.#concluded) ctx.concludeTurn()
    this.#concluded = false
  }
}

interface BackgroundRun {
  readonly owner: Owner
  readonly stream: LogStream
  readonly done: Promise<CodeRunResult>
  ended: boolean
  waiting: boolean
  expiry: ReturnType<typeof setTimeout> | undefined
}

/**
 * Checks a duration option a timer waits for: Node fires a timer longer than `MAX_TIMER_MS` (about 24.8 days)
 * at once, which would return every call at once (`returnAfterMs`) or drop every ended run (`keepMs`).
 */
function timerMs(name: string, ms: number): void {
  if (!(ms > 0) || !Number.isFinite(ms))
    throw new TypeError(`longRuns.${name} must be a positive number of milliseconds`)
  if (ms > MAX_TIMER_MS)
    throw new TypeError(`longRuns.${name} must be at most ${MAX_TIMER_MS} ms (a timer's longest delay), not ${ms}`)
}

/** A place in the background (`LongRuns.place`). */
export interface BackgroundPlace {
  /** Takes the program that is still running into the background, in this place; its handle. */
  adopt(ctx: ToolRunContext, done: Promise<CodeRunResult>, stream: LogStream): string
  /** Gives the place back (nothing once adopted). */
  free(): void
}

/** What a part returns while the program goes on: its value gets `running`, the handle. */
export type RunPart = { logs: string[]; running: string } | { logs: string[]; result?: JsonValue; session?: string }

export class LongRuns {
  readonly returnAfterMs: number
  readonly #max: number
  readonly #keepMs: number
  readonly #runs = new Map<string, BackgroundRun>()
  /** Places taken by programs that have not gone to the background (yet). */
  #placed = 0
  #next = 0

  constructor(options: LongRunOptions) {
    const { returnAfterMs, maxBackgroundRuns = 16, keepMs = 10 * 60_000 } = options
    timerMs('returnAfterMs', returnAfterMs)
    if (!Number.isInteger(maxBackgroundRuns) || maxBackgroundRuns < 1)
      throw new TypeError('longRuns.maxBackgroundRuns must be a positive integer')
    timerMs('keepMs', keepMs)
    this.returnAfterMs = returnAfterMs
    this.#max = maxBackgroundRuns
    this.#keepMs = keepMs
  }

  /**
   * A place in the background for a program that has just started, taken now (calls that arrive together each
   * count against `maxBackgroundRuns` from their start, not only once they go to the background: 40 calls at once
   * all went there with a bound of 4), or undefined when every place is taken: the call then waits for its
   * program's end. The place is given back with `free()` when its program ends in time, or becomes its run with
   * `adopt`.
   */
  place(): BackgroundPlace | undefined {
    let taken = this.#placed
    for (const run of this.#runs.values()) if (!run.ended) taken++
    if (taken >= this.#max) return undefined
    this.#placed++
    let held = true
    const free = (): void => {
      if (held) this.#placed--
      held = false
    }
    return {
      free,
      adopt: (ctx, done, stream) => {
        free()
        return this.#adopt(ctx, done, stream)
      },
    }
  }

  /** Takes a program that is still running into the background; its handle. */
  #adopt(ctx: ToolRunContext, done: Promise<CodeRunResult>, stream: LogStream): string {
    // Ended programs nobody fetched are bounded too: past maxBackgroundRuns of them, the oldest goes.
    const ended = [...this.#runs].filter(([, run]) => run.ended && !run.waiting)
    for (const [handle, run] of ended.slice(0, Math.max(0, ended.length - this.#max + 1))) {
      clearTimeout(run.expiry)
      this.#runs.delete(handle)
    }
    const handle = `run-${++this.#next}`
    const run: BackgroundRun = { owner: ownerOf(ctx), stream, done, ended: false, waiting: false, expiry: undefined }
    this.#runs.set(handle, run)
    const end = (): void => {
      run.ended = true
      // An ended program nobody waits for is dropped after keepMs.
      run.expiry = setTimeout(() => this.#runs.delete(handle), this.#keepMs)
      run.expiry.unref()
    }
    // Both ways: a runtime that rejects once it started (against its contract) must not leave an unhandled
    // rejection behind, which would end the host process; the run's `wait` reports the failure.
    done.then(end, end)
    return handle
  }

  /**
   * The next part of `handle`'s program for `ctx`'s agent: what it logged since the last part, and its
   * outcome when it has ended (a failure throws `CodeRunFailedError`, as `run_code` does); otherwise,
   * after `returnAfterMs`, the output so far and the handle again.
   */
  async wait(
    handle: string,
    ctx: ToolRunContext,
    finish: (result: CodeRunResult, logs: string[]) => JsonValue,
  ): Promise<JsonValue> {
    const run = this.#runs.get(handle)
    if (run === undefined || !sameOwner(run.owner, ownerOf(ctx))) {
      throw new ToolArgsError(
        `invalid run_code arguments: /wait no running program "${handle}": it ended and was returned, expired, or ` +
          `belongs to another agent`,
        [{ path: '/wait', message: `no running program "${handle}"` }],
      )
    }
    if (run.waiting) {
      throw new ToolArgsError(
        `invalid run_code arguments: /wait program "${handle}" is already being waited on by another call`,
        [{ path: '/wait', message: 'already being waited on' }],
      )
    }
    run.waiting = true
    try {
      const ended = await within(run.done, this.returnAfterMs, ctx.signal)
      run.stream.forward(ctx)
      if (ended === undefined) return { logs: run.stream.take(), running: handle }
      this.#runs.delete(handle)
      clearTimeout(run.expiry)
      return finish(ended, run.stream.take())
    } finally {
      run.waiting = false
    }
  }
}

/**
 * The agent a background program belongs to: its id and its session (the same conversation); only that agent
 * may wait on it. The session alone is not enough: a harness may give several agents one session log (`ptc
 * serve` gives every client connection its own agent and the shared log), and their handles (`run-1`, `run-2`,
 * …) are easy to guess.
 */
interface Owner {
  readonly id: string | undefined
  readonly session: object | undefined
}

function ownerOf(ctx: ToolRunContext): Owner {
  return { id: ctx.agent?.id, session: ctx.agent?.session }
}

function sameOwner(a: Owner, b: Owner): boolean {
  return a.id === b.id && a.session === b.session
}

/** `done`'s result if it settles within `ms` (and before `signal` aborts), else undefined. */
export async function within<T>(done: Promise<T>, ms: number, signal?: AbortSignal): Promise<T | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined
  let onAbort: (() => void) | undefined
  const later = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms)
    if (signal !== undefined) {
      onAbort = () => resolve(undefined)
      if (signal.aborted) resolve(undefined)
      else signal.addEventListener('abort', onAbort, { once: true })
    }
  })
  try {
    return await Promise.race([done, later])
  } finally {
    clearTimeout(timer)
    if (onAbort !== undefined) signal?.removeEventListener('abort', onAbort)
  }
}

/** A failed run as `run_code` reports it (`result.error` is set), with the session's notice. */
export function failure(result: CodeRunResult, logs: readonly string[]): CodeRunFailedError {
  const error = result.error ?? { kind: 'crash' as const, message: 'the run failed' }
  const notice = result.session?.note
  return new CodeRunFailedError(
    error.kind,
    notice === undefined ? error.message : `${error.message} [sandbox session: ${notice}]`,
    logs,
  )
}
