import { rejectEntry, settleHostCall, type ResultBounds } from './settle.js'
import type { CodeRunLimits, CodeRunRequest, JsonValue } from './types.js'

/**
 * The deepest host result a guest receives, on every backend. QuickJS parses JSON recursively on
 * the native stack (measured: 5 000 levels parse on the engine's thread, 10 000 overflow it), so
 * a deeper result rejects that call with a clear message; isolated-vm applies the same bound so
 * that a program behaves the same on both.
 */
export const MAX_RESULT_DEPTH = 4096

/**
 * The longest result a guest receives, and the longest batch of results, in UTF-16 units: half of V8's
 * longest string (2^29 - 24), so that a batch, and any result with its entry around it, can always be made.
 * The results that finish together are delivered in batches of at most this, or of a quarter of
 * `memoryBytes` when smaller (the guest holds a batch's text and what it parses from it; a result longer
 * than that goes alone): 20 results of 30 MB finishing together made one 600 MB string, and the
 * `RangeError` of building it was thrown where nothing could catch it and ended the host process.
 */
export const MAX_BATCH_CHARS = 2 ** 28

/**
 * When the settle entries of the calls that finished are delivered, together: `microtask` (at the
 * end of the current job, the QuickJS backend: it pumps the engine right after), or `immediate`
 * (after the event loop's I/O phase, isolated-vm: one message to the engine per loop turn).
 * A `microtask` flush gives way to the event loop (delivers in a `setImmediate`) once its run has gone
 * `YIELD_AFTER_MS` without a delivery from one (see `HostCalls`).
 */
export type ReplyFlush = 'microtask' | 'immediate'

/**
 * How long a run's `microtask` deliveries may follow one another before one waits for the event loop's
 * next turn. On the inline QuickJS engine a delivery pumps the guest, whose next call goes through the
 * host and back in promise jobs alone: a program calling tools in a loop held the thread for its whole
 * run, so that no timer fired (its wall ceiling among them: a 10 s wall ended after 73 s) and no other
 * run, request or I/O was served. A turn every 5 ms costs one `setImmediate` per ~150 inline sub-calls.
 */
export const YIELD_AFTER_MS = 5

/** What `HostCalls` needs from its run. */
export interface HostCallsOptions {
  /** The run's resolved limits: the sub-call caps, and `memoryBytes` bounds a result's length. */
  readonly limits: Pick<
    CodeRunLimits,
    'maxSubCalls' | 'maxPendingSubCalls' | 'memoryBytes' | 'maxResultChars' | 'maxArgumentChars'
  >
  readonly flush: ReplyFlush
  /** Delivers a batch of `count` results (`SettleEntry[]` as JSON text) into the guest. */
  deliver(batchJson: string, count: number): void
  /**
   * A call went past a sub-call cap, or the run's signal aborted before a call started or a result
   * was delivered: the run must end with that failure.
   */
  stop(reason: 'abort' | 'limit-calls' | 'limit-pending' | 'limit-args'): void
  /**
   * A durable run (`CodeRunRequest.durable`) has `parked` calls and nothing else on the host side that
   * could settle a guest promise: the engine may suspend once the guest waits only on those (it checks:
   * a reply or a call may still be on its way). Called again each time this holds anew.
   */
  quiet?(parked: number): void
  /** Calls the run had started before it suspended (a resumed run): they count against `maxSubCalls`. */
  readonly started?: number
}

/** A call `request.call` parked (`parkCall`): it stays pending in the guest until the run resumes. */
export interface ParkedHostCall {
  readonly id: number
  readonly name: string
  readonly argsJson: string
  readonly detail?: JsonValue
}

/**
 * The host side of one run's sub-calls, as every backend runs them, and the one layer that enforces
 * the sub-call caps. Each call the guest starts is counted against `maxSubCalls` (calls started) and
 * `maxPendingSubCalls` (started and not yet delivered back), and its argument text against
 * `memoryBytes` (the text of the calls the host holds, until each settles: a guest could otherwise make
 * the host hold its memory's worth once per pending call); the first past any of them stops the run.
 * A call whose argument text is longer than `maxArgumentChars` is rejected unparsed (`INVALID_ARGS`); an
 * engine on another thread or in another process sends only that text's length for such a call (see `start`).
 * An admitted call goes through `settleHostCall` (a fresh parse handed to `request.call`, the outcome
 * as a settle entry; results deeper than `MAX_RESULT_DEPTH` or longer than `maxResultChars` or
 * `memoryBytes` characters reject it) with one run-wide signal, aborted by `close()`; the entries of the calls that
 * finish before the next flush are delivered together, in batches (`[entry,…]` JSON text and its count) of at most a
 * quarter of `memoryBytes` of text (see `MAX_BATCH_CHARS`). After `close()`, calls are ignored and late results
 * dropped. Once the run's own signal has aborted, nothing more reaches the guest: a call it starts and a batch due for
 * delivery stop the run as `abort` instead. (The sub-calls the abort cut short reject; delivering those rejections
 * would let the program see them and end on its own, as an exception, before the host stopped it.)
 */
export class HostCalls {
  readonly #request: CodeRunRequest
  readonly #options: HostCallsOptions
  readonly #bounds: ResultBounds
  /** The longest batch of results, in UTF-16 units (see `MAX_BATCH_CHARS`). */
  readonly #batchChars: number
  /** The signal the run's calls get, made with the first call (most runs of a warm pool make none). */
  #signal: AbortController | undefined
  #replies: string[] = []
  #flushQueued = false
  /** Calls waiting on `request.call`. */
  #inHost = 0
  /** Calls started and not yet delivered back (the pending cap). */
  #undelivered = 0
  /** The characters of argument text of the calls the host holds: waiting on `request.call`, or parked. */
  #argChars = 0
  #closed = false
  /** When this run last delivered from an event-loop turn of its own (or began): see `YIELD_AFTER_MS`. */
  #turnAt = performance.now()
  /** Calls started. */
  started: number
  /** Calls parked, in the order they parked (a durable run's). */
  readonly parked: ParkedHostCall[] = []

  constructor(request: CodeRunRequest, options: HostCallsOptions) {
    this.#request = request
    this.#options = options
    const { memoryBytes, maxResultChars } = options.limits
    const memoryChars = Math.min(memoryBytes, MAX_BATCH_CHARS)
    this.#bounds =
      maxResultChars < memoryChars
        ? {
            maxDepth: MAX_RESULT_DEPTH,
            maxChars: maxResultChars,
            beyond: `the ${maxResultChars} a sub-call may return (the maxResultChars limit)`,
          }
        : { maxDepth: MAX_RESULT_DEPTH, maxChars: memoryChars }
    this.#batchChars = Math.min(Math.floor(options.limits.memoryBytes / 4), MAX_BATCH_CHARS)
    this.started = options.started ?? 0
  }

  /** Nothing on the host side can settle a guest promise any more. */
  get idle(): boolean {
    return this.#inHost === 0 && this.#replies.length === 0 && !this.#flushQueued
  }

  get closed(): boolean {
    return this.#closed
  }

  /**
   * One call the guest made: past a cap the run is stopped and the call never starts; otherwise
   * `request.call` runs now and its entry is delivered with the next batch. `argsJson` is the guest's
   * argument text, or, from an engine that checked it against `maxArgumentChars` itself, the number of
   * characters of a text it held back as too long (`heldBackArguments`): a program repeating a 100 MB
   * argument its calls may not pass made the host thread receive and copy each one only to refuse it.
   */
  start(id: number, name: string, argsJson: string | number): void {
    if (this.#closed) return
    if (this.#request.signal?.aborted === true) return this.#options.stop('abort')
    const { limits } = this.#options
    if (this.started >= limits.maxSubCalls) return this.#options.stop('limit-calls')
    if (this.#undelivered >= limits.maxPendingSubCalls) return this.#options.stop('limit-pending')
    if (typeof argsJson === 'number' || argsJson.length > limits.maxArgumentChars) {
      this.started++
      this.#undelivered++
      return this.#queue(
        rejectEntry(
          id,
          tooLongArguments(typeof argsJson === 'number' ? argsJson : argsJson.length, limits.maxArgumentChars),
        ),
      )
    }
    if (this.#argChars + argsJson.length > limits.memoryBytes) return this.#options.stop('limit-args')
    this.started++
    this.#undelivered++
    this.#inHost++
    this.#argChars += argsJson.length
    // Only a durable run parks: in any other, a `parkCall` rejection is an ordinary one.
    void settleHostCall(
      this.#request,
      id,
      name,
      argsJson,
      (this.#signal ??= new AbortController()).signal,
      this.#bounds,
      this.#request.durable !== undefined,
    ).then((entry) => {
      if (this.#closed) return
      this.#inHost--
      if (typeof entry === 'string') {
        this.#argChars -= argsJson.length
        return this.#queue(entry)
      }
      this.parked.push({ id, name, argsJson, ...(entry.detail !== undefined && { detail: entry.detail }) })
      this.#checkQuiet()
    })
  }

  /** Parked calls, and nothing else the host could still settle: the engine may suspend (`quiet`). */
  #checkQuiet(): void {
    if (!this.#closed && this.parked.length > 0 && this.idle) this.#options.quiet?.(this.parked.length)
  }

  /** The run ended: calls still in flight see their signal abort; late results are dropped. */
  close(): void {
    if (this.#closed) return
    this.#closed = true
    this.#replies = []
    this.#signal?.abort(new Error('the code run has ended'))
  }

  #queue(entry: string): void {
    this.#replies.push(entry)
    if (this.#flushQueued) return
    this.#flushQueued = true
    if (this.#options.flush === 'microtask' && performance.now() - this.#turnAt < YIELD_AFTER_MS)
      queueMicrotask(this.#deliverBatch)
    else setImmediate(this.#deliverInTurn)
  }

  readonly #deliverInTurn = (): void => {
    this.#turnAt = performance.now()
    this.#deliverBatch()
  }

  readonly #deliverBatch = (): void => {
    this.#flushQueued = false
    if (this.#closed || this.#replies.length === 0) return
    if (this.#request.signal?.aborted === true) return this.#options.stop('abort')
    const replies = this.#replies
    this.#replies = []
    // Consecutive entries up to #batchChars of text in all (a longer entry alone: at most MAX_BATCH_CHARS,
    // `fulfilEntry`).
    for (let start = 0; start < replies.length && !this.#closed; ) {
      let end = start + 1
      let chars = 2 + (replies[start] as string).length
      while (end < replies.length && chars + 1 + (replies[end] as string).length <= this.#batchChars)
        chars += 1 + (replies[end++] as string).length
      const count = end - start
      this.#undelivered -= count
      this.#options.deliver(`[${(count === replies.length ? replies : replies.slice(start, end)).join(',')}]`, count)
      start = end
    }
    this.#checkQuiet()
  }
}

/**
 * What an engine sends for a call's argument text instead of the text (see `HostCalls.start`): the text
 * when it is within `maxArgumentChars`, else its length, which the host refuses as the text itself.
 */
export function heldBackArguments(argsJson: string, maxArgumentChars: number): string | number {
  return argsJson.length > maxArgumentChars ? argsJson.length : argsJson
}

/** The refusal of arguments longer than `maxArgumentChars`: what the program's `ToolCallError` says. */
function tooLongArguments(chars: number, max: number): Error {
  const error = new Error(
    `the arguments are ${chars} characters of JSON, more than the ${max} a sub-call may pass (the maxArgumentChars ` +
      `limit)`,
  )
  return Object.assign(error, { code: 'INVALID_ARGS' })
}
