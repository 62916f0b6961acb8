import type IsolatedVM from 'isolated-vm'
import type { IvmModule } from '../load.js'

/** Receives what the guest sends through the three host functions (arguments are untrusted). */
export interface SlotHandler {
  onCall(id: unknown, name: unknown, argsJson: unknown): void
  onLog(level: unknown, text: unknown): void
  onFinish(kind: unknown, payload: unknown): void
  /** isolated-vm lost control of the isolate (`onCatastrophicError`). */
  onCatastrophe(message: string): void
}

/** The guest `setup` function: installs the prelude for one run and returns its `start`. */
export type SetupFunction = (bindingsJson: string, maxOutputBytes: number, maxSubCalls: number) => (fn: unknown) => void
/** The guest `settle` trampoline: forwards a batch of results to the prelude installed by `setup`. */
export type SettleFunction = (batchJson: string) => void

/** Bytes per MiB: isolated-vm's `memoryLimit` is in MiB (minimum 8). */
export const MIB = 1024 * 1024
export const MIN_MEMORY_MIB = 8

/**
 * The memory limit handed to isolated-vm for a byte budget: whole MiB, rounded up, at least 8.
 * isolated-vm's limit is soft (checked after full GCs); the run adds a heap-statistics backstop.
 */
export function memoryLimitMib(memoryBytes: number): number {
  return Math.max(MIN_MEMORY_MIB, Math.ceil(memoryBytes / MIB))
}

/**
 * Evaluated once per isolate, before any program: captures the four host functions (isolated-vm
 * turns each `Callback` into a plain guest function) in a closure, never in a global, and returns
 * the only way to install the prelude. Nothing here is reachable from program code.
 *
 * The `call` and `log` wrappers stop forwarding once the host is certain to have ended the run, so a
 * guest flooding in a synchronous loop cannot queue millions of callbacks on the host thread before
 * the host gets to dispose it: a call past `maxSubCalls + 1` is dropped (the host stops the run at
 * call `maxSubCalls + 1`); a log is dropped once the entries already sent cost more than
 * `maxOutputBytes` by a lower bound of what the host's ledger charges (UTF-16 length, never more
 * than the UTF-8 bytes, plus the 1-byte separator of every entry). A log entry, or a value, longer than
 * the room that bound leaves cannot fit: only its length leaves the isolate, and the host fails the run as
 * the text would have (a 50 M-character value cost the host thread 0.7 s to receive, only to refuse it).
 * So an entry is only ever dropped
 * here after the ledger has overflowed on an entry that did reach the host: never silently.
 *
 * Forwarded calls and logs are ignored-result callbacks (the guest does not wait for them), so a
 * synchronous flood could still queue up to `maxOutputBytes` of them on the engine's thread, which
 * then needs seconds to drain before it even sees the order to stop. Every `BARRIER_EVERY`-th
 * forwarded message is followed by a synchronous no-op callback: it returns only once the engine's
 * thread has run everything queued before it, so at most that many are ever waiting, and none is
 * buffered (a log made just before a hang still reaches the host).
 */
/** Forwarded messages between two synchronous barriers (see `setupSource`). */
const BARRIER_EVERY = 256

/** The script whose value is the function that takes the four host functions and returns `[setup, settle]`. */
const setupSource = (prelude: string): string => `(function (hostCall, hostLog, hostFinish, hostBarrier) {
var prelude = ${prelude};
var settle = null;
function setup(bindingsJson, maxOutputBytes, maxSubCalls) {
  var calls = maxSubCalls + 1, room = maxOutputBytes, sent = 0;
  var host = {
    call: function (id, name, argsJson) { if (calls > 0) { calls--; hostCall(id, name, argsJson); if (++sent % ${BARRIER_EVERY} === 0) hostBarrier(); } },
    log: function (level, text) {
      if (room < 0) return;
      /* Longer than the room left, it cannot fit (a unit is a byte at least): only its length leaves. */
      if (text.length > room) { room = -1; hostLog(level, text.length); return; }
      room -= text.length + 1; hostLog(level, text); if (++sent % ${BARRIER_EVERY} === 0) hostBarrier();
    },
    finish: function (kind, payload) { hostFinish(kind, kind === 1 && payload.length > room ? payload.length : payload); },
  };
  var api = prelude(host, bindingsJson, null, maxOutputBytes);
  settle = api.settle;
  return api.start;
}
return [setup, function (batchJson) { settle(batchJson); }];
})`

/**
 * V8's code cache of the setup script, made by the first isolate of this process that compiles it and
 * given to every later one: they deserialize its compiled code instead of parsing it again (about half a
 * millisecond of each isolate's creation). Kept for one prelude text (a process has one).
 */
let setupCache: { source: string; data: IsolatedVM.ExternalCopy<ArrayBuffer> } | undefined

const SETUP_FILENAME = 'ptc-prelude.js'

/**
 * One single-use isolate: a fresh V8 isolate with its own heap limit, one context, the three
 * host callbacks (forwarding to whichever run owns the slot) and the setup function. A slot serves
 * one run and is then disposed: no state survives between runs, and `dispose()` from the wall or
 * CPU watchdog can only ever kill that run.
 */
export class IsolateSlot {
  readonly isolate: IsolatedVM.Isolate
  readonly context: IsolatedVM.Context
  readonly setup: IsolatedVM.Reference<SetupFunction>
  readonly settle: IsolatedVM.Reference<SettleFunction>
  readonly memoryMib: number
  handler: SlotHandler | undefined

  private constructor(
    isolate: IsolatedVM.Isolate,
    context: IsolatedVM.Context,
    setup: IsolatedVM.Reference<SetupFunction>,
    settle: IsolatedVM.Reference<SettleFunction>,
    memoryMib: number,
  ) {
    this.isolate = isolate
    this.context = context
    this.setup = setup
    this.settle = settle
    this.memoryMib = memoryMib
  }

  /**
   * Creates the isolate, its context and setup, all on this thread (about 1.6 ms here, 1.0 of them V8's
   * isolate and context): synchronous calls take no round trips to the isolate's thread, which cost more
   * than the work they carry (2.7 ms in all, done that way with the setup parsed each time).
   */
  static create(ivm: IvmModule, memoryMib: number, prelude: string): IsolateSlot {
    let slot: IsolateSlot | undefined
    const isolate = new ivm.Isolate({
      memoryLimit: memoryMib,
      onCatastrophicError: (message: string) => slot?.handler?.onCatastrophe(message),
    })
    try {
      const context = isolate.createContextSync()
      const call = new ivm.Callback(
        (id: unknown, name: unknown, args: unknown) => slot?.handler?.onCall(id, name, args),
        {
          ignored: true,
        },
      )
      const log = new ivm.Callback((level: unknown, text: unknown) => slot?.handler?.onLog(level, text), {
        ignored: true,
      })
      const finish = new ivm.Callback((kind: unknown, payload: unknown) => slot?.handler?.onFinish(kind, payload), {
        ignored: true,
      })
      // Synchronous: the guest waits until the engine's thread has run it (and all queued before it).
      const barrier = new ivm.Callback(() => undefined)
      const source = setupSource(prelude)
      const cached = setupCache?.source === source ? setupCache.data : undefined
      // (isolated-vm's typings omit the `cachedData` a compile with `produceCachedData` returns.)
      const script: IsolatedVM.Script & IsolatedVM.CachedDataResult & { cachedDataRejected?: boolean } =
        isolate.compileScriptSync(
          source,
          cached === undefined
            ? { filename: SETUP_FILENAME, produceCachedData: true }
            : { filename: SETUP_FILENAME, cachedData: cached },
        )
      if (cached === undefined && script.cachedData !== undefined) setupCache = { source, data: script.cachedData }
      // V8 refused it (it compiled the source instead): the next isolate makes a new one.
      else if (script.cachedDataRejected === true) setupCache = undefined
      const factory = script.runSync(context, { reference: true }) as IsolatedVM.Reference<unknown>
      script.release()
      const pair = factory.applySync(undefined, [call, log, finish, barrier], {
        result: { reference: true },
      }) as IsolatedVM.Reference<unknown[]>
      factory.release()
      const setup = pair.getSync(0, { reference: true })
      const settle = pair.getSync(1, { reference: true })
      pair.release()
      slot = new IsolateSlot(
        isolate,
        context,
        setup as IsolatedVM.Reference<SetupFunction>,
        settle as IsolatedVM.Reference<SettleFunction>,
        memoryMib,
      )
      return slot
    } catch (error) {
      if (!isolate.isDisposed) isolate.dispose()
      throw error
    }
  }

  get disposed(): boolean {
    return this.isolate.isDisposed
  }

  /** Kills whatever runs in the isolate and frees its heap. Idempotent. */
  dispose(): void {
    this.handler = undefined
    if (!this.isolate.isDisposed) {
      try {
        this.isolate.dispose()
      } catch {
        // Already gone (isolated-vm disposed it on its memory limit).
      }
    }
  }
}
