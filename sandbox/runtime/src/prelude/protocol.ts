/**
 * The contract between a backend and the guest prelude (`GUEST_PRELUDE`). Everything that crosses
 * is a number or a string made inside the guest with intrinsics captured before the program ran.
 *
 * The backend evaluates `GUEST_PRELUDE` (an expression) once per engine before any program, calls the
 * function it yields once per run with `(host, bindingsJson, queueJson)` and keeps the functions of
 * the returned object (a new run closes the previous one: its functions no longer reach the host):
 * - `start(fn)`: runs the wrapped program (`PreparedProgram.source` evaluated) and returns its promise,
 *   from which a host may read an outcome the guest could not report (out of memory, QuickJS cannot
 *   queue the job that would have called `finish`);
 * - `settle(batchJson)`: delivers host results, a JSON array of `SettleEntry`, parsed inside the guest
 *   by a captured `JSON.parse` (one parse per batch, no code compiled per result);
 * - `takeCalls()`, in queue mode only: the sub-calls made since the last `takeCalls` (see `parseQueuedCalls`).
 *
 * Two ways to receive sub-calls. With `host.call`, the guest calls it as each sub-call starts (a
 * backend whose engine runs its own job loop, isolated-vm). Without it — queue mode, for a backend
 * that pumps jobs itself and pays per host-function call (QuickJS) — calls wait in the guest until
 * the backend calls `takeCalls()` after pumping, and `queueJson` (`QueueCaps`) gives the caps the guest
 * then applies as each call starts, reporting the first call past one through `host.limit`.
 * The prelude captures the host functions and never exposes them (or `host`) to the program:
 */
export interface GuestHostFunctions {
  /** A sub-call started: `id` counts from 1 in submission order; `argsJson` is lossless JSON text. Absent in queue mode. */
  call?(id: number, name: string, argsJson: string): void
  /** One `console` call: `level` is one of `GUEST_LOG_LEVELS`, `text` the formatted line. */
  log(level: string, text: string): void
  /** The program settled, exactly once; see `FinishKind`. */
  finish(kind: FinishKind, payload: string): void
  /** Queue mode: a sub-call went past a cap — `1`: `maxSubCalls`, `2`: `maxPendingSubCalls`. */
  limit?(which: 1 | 2): void
  /**
   * Queue mode with `QueueCaps.handOverEvery`: that many calls were queued while the guest runs on; here they
   * are, as `takeCalls()` would have returned them (and they are no longer queued).
   */
  queued?(callsText: string): void
}

/**
 * The deepest nesting of a JSON value that leaves the guest: a sub-call's arguments, the program's value.
 * The prelude refuses a deeper one where it makes its text (the arguments as `INVALID_ARGS`, which the
 * program can catch; the value as `invalid-output`) and the host checks the text again before parsing it.
 * Host code walks values recursively (`JSON.stringify` overflows Node's main-thread stack at about 4 200
 * levels, `structuredClone` at about 3 300, measured), so a harness must never receive one it cannot
 * serialize; 1 024 leaves room for the caller's own frames.
 */
export const MAX_VALUE_DEPTH = 1024

/**
 * The longest thrown message that leaves the guest, in UTF-16 units, for a run's `maxOutputBytes`: the host
 * cuts a failure to that many UTF-8 bytes (at least one a unit), and twice that, as mapping positions
 * shortens a message; the rest is counted (`GuestErrorInfo.cutChars`), not sent. The prelude's formula is
 * this one's text, with these two numbers.
 */
export const ERROR_CHARS_PER_OUTPUT_BYTE = 2
export const ERROR_CHARS_SLACK = 1024
export function maxErrorChars(maxOutputBytes: number): number {
  return ERROR_CHARS_PER_OUTPUT_BYTE * maxOutputBytes + ERROR_CHARS_SLACK
}

/** The caps queue mode applies in the guest (the run's limits of the same names). */
export interface QueueCaps {
  maxSubCalls: number
  maxPendingSubCalls: number
  /**
   * With `host.queued`: the guest hands its queued calls over as soon as this many wait, without waiting for
   * the backend's `takeCalls()` (a host on another thread starts them while a burst of calls goes on).
   * Absent or 0: only `takeCalls()` takes them.
   */
  handOverEvery?: number
}

/**
 * Queue mode: the text `takeCalls()` returned as `[id, bindingIndex, argsJson]` triples. Each entry is
 * `id,index,argsJson`, entries are joined by U+0001 (lossless JSON text has no raw control character).
 */
export function parseQueuedCalls(text: string): [id: number, index: number, argsJson: string][] {
  const out: [number, number, string][] = []
  if (text === '') return out
  for (const entry of text.split('\u0001')) {
    const a = entry.indexOf(',')
    const b = entry.indexOf(',', a + 1)
    out.push([Number(entry.slice(0, a)), Number(entry.slice(a + 1, b)), entry.slice(b + 1)])
  }
  return out
}

/** `finish` kinds: what `payload` holds. */
export const FinishKind = {
  /** The program returned `undefined`; payload `''`. */
  Undefined: 0,
  /** The program returned a value; payload is its lossless JSON text. */
  Value: 1,
  /** The value is not lossless JSON; payload says why (an `invalid-output` failure). */
  InvalidValue: 2,
  /** The program threw; payload is the JSON text of a `GuestErrorInfo`. */
  Error: 3,
} as const
export type FinishKind = (typeof FinishKind)[keyof typeof FinishKind]

/**
 * One host result: `[id, 1, value]` fulfils call `id`; `[id, 0, message, code?, details?]` rejects it
 * with a ToolCallError carrying that message, code (default `TOOL_ERROR`) and JSON details.
 */
export type SettleEntry =
  | readonly [id: number, ok: 1, value: unknown]
  | readonly [id: number, ok: 0, message: string, code?: string, details?: unknown]

/** The `console` methods the guest has. */
export const GUEST_LOG_LEVELS = Object.freeze(['log', 'info', 'warn', 'error', 'debug'] as const)

/**
 * Global names a guest may see after the prelude ran: ECMAScript built-ins (ES2025, Annex B
 * `escape`/`unescape`, ECMA-402 `Intl`, the engines' `InternalError`) and the three ptc globals.
 * The prelude deletes every other global own property (`SharedArrayBuffer`, `Atomics`, `WebAssembly`,
 * `queueMicrotask`, `performance`, …). `Atomics` and `SharedArrayBuffer` are deliberately absent.
 */
export const GUEST_GLOBALS: readonly string[] = Object.freeze([
  'globalThis',
  'Infinity',
  'NaN',
  'undefined',
  'eval',
  'isFinite',
  'isNaN',
  'parseFloat',
  'parseInt',
  'decodeURI',
  'decodeURIComponent',
  'encodeURI',
  'encodeURIComponent',
  'escape',
  'unescape',
  'AggregateError',
  'Array',
  'ArrayBuffer',
  'BigInt',
  'BigInt64Array',
  'BigUint64Array',
  'Boolean',
  'DataView',
  'Date',
  'Error',
  'EvalError',
  'FinalizationRegistry',
  'Float16Array',
  'Float32Array',
  'Float64Array',
  'Function',
  'Int8Array',
  'Int16Array',
  'Int32Array',
  'Iterator',
  'Map',
  'Number',
  'Object',
  'Promise',
  'Proxy',
  'RangeError',
  'ReferenceError',
  'RegExp',
  'Set',
  'String',
  'Symbol',
  'SyntaxError',
  'TypeError',
  'Uint8Array',
  'Uint8ClampedArray',
  'Uint16Array',
  'Uint32Array',
  'URIError',
  'WeakMap',
  'WeakRef',
  'WeakSet',
  'JSON',
  'Math',
  'Reflect',
  'Intl',
  'InternalError',
  'SuppressedError',
  'DisposableStack',
  'AsyncDisposableStack',
  'tools',
  'ToolCallError',
  'console',
])
