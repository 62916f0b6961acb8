import type { EitherFFI, QuickJSContext, QuickJSHandle, QuickJSRuntime } from 'quickjs-emscripten-core'
import { GUEST_PRELUDE } from '@ptc/sandbox/backend'
import { ImageMemory, type EngineHeap } from './image-memory.js'
import type { LoadedModule } from './module.js'
import { locateRandomState, seedRandomState } from './random-state.js'
import type { SessionMemory } from './session-memory.js'

// For the files outside this folder that import them from here (`host/`, `scripts/boot-facts.ts`).

/** What the image's host functions and interrupt handler call: the engine run on it. */
export interface ImageHooks {
  log(text: string): void
  limit(which: number): void
  /** Calls the guest handed over while it runs (`QueueCaps.handOverEvery`), as `takeCalls()` returns them. */
  queued(callsText: string): void
  finish(kind: number, payload: string): void
  shouldInterrupt(): boolean
}

/**
 * A QuickJS module booted once — a runtime, a context, the host functions and the guest
 * prelude compiled to a function — with a copy of its WebAssembly memory taken at that point.
 *
 * Every run starts from that state and `reset()` puts the copy back when the run ends, so no guest
 * state survives a run (all of QuickJS's state lives in the module's linear memory) and no run pays
 * for compiling the prelude (1.1-3 ms of QuickJS parsing per fresh context, measured here; putting
 * the memory back costs about 0.05 ms). quickjs-emscripten exposes no bytecode read/write, so this is
 * the way to reuse the compiled prelude without sharing a realm between runs.
 *
 * What the copy would otherwise make identical across runs is re-randomized: `Math.random`'s
 * xorshift64* state, located once per image by checking which word of the context advances by
 * exactly one xorshift step when `Math.random` runs (and whose output it explains).
 *
 * Handles made during a run are never disposed after `reset()`: the memory they pointed at is gone.
 * A module that trapped (a WebAssembly fault unwinds without restoring the stack pointer) must not be
 * reset: the owner drops it.
 */
export class EngineImage {
  readonly loaded: LoadedModule
  readonly runtime: QuickJSRuntime
  readonly context: QuickJSContext
  /**
   * The prelude's per-run function, `(host, bindingsJson, queueJson, maxOutputBytes) => { start, settle, takeCalls }`
   * (the prelude itself ran at boot).
   */
  readonly prelude: QuickJSHandle
  /** The `host` object the prelude receives (`limit`, `queued`, `log`, `finish`; no `call`: queue mode). */
  readonly host: QuickJSHandle
  hooks: ImageHooks | undefined
  readonly #memory: ImageMemory
  readonly #seedAt: number
  readonly #ffi: EitherFFI
  readonly #heap: EngineHeap
  readonly #ctxPtr: number
  readonly #rtPtr: number
  /** 8 bytes of the image's heap: an argv slot and a context out-pointer for the direct calls. */
  readonly #scratch: number
  #u8 = new Uint8Array(0)
  #u32 = new Uint32Array(0)
  #disposed = false

  private constructor(
    loaded: LoadedModule,
    runtime: QuickJSRuntime,
    context: QuickJSContext,
    prelude: QuickJSHandle,
    host: QuickJSHandle,
  ) {
    this.loaded = loaded
    this.runtime = runtime
    this.context = context
    this.prelude = prelude
    this.host = host
    this.#ffi = loaded.module.getFFI()
    const memory = context.getMemory((runtime as unknown as { rt: { value: never } }).rt.value)
    this.#heap = memory.module as unknown as EngineHeap
    this.#ctxPtr = memory.ctx.value
    this.#rtPtr = memory.rt.value
    // Allocated before the memory is copied, so it exists in every run.
    this.#scratch = this.#heap._malloc(8)
    this.#seedAt = locateRandomState(loaded, context)
    this.#memory = new ImageMemory(loaded, this.#heap)
  }

  /** Boots `loaded` (a module no run has used) into an image. Throws if the engine is not as expected. */
  static boot(loaded: LoadedModule): EngineImage {
    const rt = loaded.module.newRuntime()
    const ctx = rt.newContext()
    // The host functions are made before the image exists: they reach its current hooks through `booted`.
    const booted: { image?: EngineImage } = {}
    const hooks = (): ImageHooks | undefined => booted.image?.hooks
    rt.setInterruptHandler(() => hooks()?.shouldInterrupt() ?? false)
    const host = ctx.newObject()
    for (const [name, fn] of [
      // No `call`: the prelude runs in queue mode and the engine run takes the queued calls after each pump.
      ['limit', ctx.newFunction('limit', (which) => hooks()?.limit(ctx.getNumber(which)))],
      ['queued', ctx.newFunction('queued', (text) => hooks()?.queued(ctx.getString(text)))],
      ['log', ctx.newFunction('log', (_level, text) => hooks()?.log(ctx.getString(text)))],
      [
        'finish',
        ctx.newFunction('finish', (kind, payload) => hooks()?.finish(ctx.getNumber(kind), ctx.getString(payload))),
      ],
    ] as const) {
      ctx.setProp(host, name, fn)
      fn.dispose()
    }
    const prelude = ctx.unwrapResult(ctx.evalCode(GUEST_PRELUDE, 'ptc-prelude.js'))
    booted.image = new EngineImage(loaded, rt, ctx, prelude, host)
    return booted.image
  }

  /**
   * `fn()` returning a string: the string, or the error handle if it threw. Used for `takeCalls()`, once
   * per pump, without the library's per-call handle and pointer-array allocations.
   */
  callForString(fn: QuickJSHandle): string | QuickJSHandle {
    const ffi = this.#ffi
    const ctx = this.#ctxPtr as never
    const result = ffi.QTS_Call(ctx, fn.value, this.context.undefined.value, 0, 0 as never)
    const error = ffi.QTS_ResolveException(ctx, result)
    if (error) {
      ffi.QTS_FreeValuePointer(ctx, result)
      return this.context.getMemory(this.#rtPtr as never).heapValueHandle(error)
    }
    const chars = ffi.QTS_GetString(ctx, result)
    const text = this.#heap.UTF8ToString(chars as unknown as number)
    ffi.QTS_FreeCString(ctx, chars)
    ffi.QTS_FreeValuePointer(ctx, result)
    return text
  }

  /**
   * `fn(arg)` with the result dropped; the error handle if it threw. The library's `callFunction` does
   * the same with a pointer array allocated, filled and freed per call: this is the per-result path.
   */
  callDroppingResult(fn: QuickJSHandle, arg: QuickJSHandle): QuickJSHandle | undefined {
    const ffi = this.#ffi
    this.#views()
    this.#u32[this.#scratch >> 2] = arg.value as number
    const result = ffi.QTS_Call(
      this.#ctxPtr as never,
      fn.value,
      this.context.undefined.value,
      1,
      this.#scratch as never,
    )
    const error = ffi.QTS_ResolveException(this.#ctxPtr as never, result)
    ffi.QTS_FreeValuePointer(this.#ctxPtr as never, result)
    return error ? this.context.getMemory(this.#rtPtr as never).heapValueHandle(error) : undefined
  }

  /**
   * Runs every pending job; the error handle if one failed. The library's `executePendingJobs` does
   * the same with a typed array and a handle allocated per call.
   */
  runJobs(): QuickJSHandle | undefined {
    const ffi = this.#ffi
    const out = this.#scratch + 4
    this.#views()
    this.#u32[out >> 2] = 0
    const value = ffi.QTS_ExecutePendingJob(this.#rtPtr as never, -1, out as never)
    // The jobs may have grown the memory: fresh views.
    this.#views()
    if (this.#u32[out >> 2] === 0) {
      ffi.QTS_FreeValuePointerRuntime(this.#rtPtr as never, value)
      return undefined
    }
    // A number (jobs run) or the exception of the job that failed.
    const type = ffi.QTS_Typeof(this.#ctxPtr as never, value) as unknown as number
    const isNumber = this.#u8[type] === 0x6e && this.#u8[type + 1] === 0x75 // "nu…": "number"
    this.#heap._free(type)
    if (isNumber) {
      ffi.QTS_FreeValuePointer(this.#ctxPtr as never, value)
      return undefined
    }
    return this.context.getMemory(this.#rtPtr as never).heapValueHandle(value)
  }

  /** Byte and word views of the memory as it is now (growing it replaces the buffer). */
  #views(): void {
    const buffer = this.loaded.memory.buffer
    if (this.#u8.buffer !== buffer) {
      this.#u8 = new Uint8Array(buffer)
      this.#u32 = new Uint32Array(buffer)
    }
  }

  /** Whether a job is pending. */
  hasPendingJob(): boolean {
    return this.#ffi.QTS_IsJobPending(this.#rtPtr as never) !== 0
  }

  /** Gives the next run a fresh `Math.random` sequence. */
  reseed(): void {
    seedRandomState(this.loaded.memory.buffer, this.#seedAt)
  }

  /**
   * The id of the session memory this image holds instead of its booted state (a session run's
   * memory stays in place after its capture, so the session's next run here needs no restore), or
   * undefined when it is booted.
   */
  get resident(): string | undefined {
    return this.#memory.resident
  }

  /**
   * Session captures go to a buffer the image reuses (`ImageMemory.keepsCaptures`): in inline isolation, where
   * a capture is never transferred.
   */
  get keepsCaptures(): boolean {
    return this.#memory.keepsCaptures
  }

  set keepsCaptures(keeps: boolean) {
    this.#memory.keepsCaptures = keeps
  }

  /** Puts the memory back as it was after boot: the run's every object, handle and job is gone. */
  reset(): void {
    this.#memory.reset()
  }

  /**
   * What identifies this image's booted state (engine variant and booted bytes, but for the few bytes
   * that differ from boot to boot: `volatileBytes`): a session's memory applies only to an image with
   * the same fingerprint. Needs `prepareSessions()`.
   */
  get fingerprint(): string {
    return this.#memory.fingerprint
  }

  /** Learns what sessions need to know about this build (once per thread and variant: `sessionFacts`). */
  prepareSessions(): Promise<void> {
    return this.#memory.prepareSessions((loaded) => EngineImage.boot(loaded))
  }

  get sessionsPrepared(): boolean {
    return this.#memory.sessionsPrepared
  }

  /**
   * Finds the word that holds the allocator's break (emscripten's sbrk pointer): the only word of the
   * booted state that grows past a 4 MiB and then an 8 MiB block by about as much, to an address above
   * both. Undefined when not exactly one word does (the engine then scans the memory instead).
   */
  locateBreak(): number | undefined {
    return this.#memory.locateBreak()
  }

  /**
   * The state a session run left, as the pages that differ from the booted image; call it once the run
   * ended and released its handles. The memory stays as it is (`resident`) until a `reset()`. When
   * the changed bytes are more than `maxBytes`, nothing is copied and `{ over }` says how many there were.
   * Everything above the booted state was zero when the session's run started (`restore`), so no byte of
   * another run's can be in it. `lend`: the memory stays resident, so its bytes may go to the image's own
   * buffer (`keepsCaptures`).
   */
  capture(maxBytes = Number.POSITIVE_INFINITY, lend = false): SessionMemory | { over: number } {
    return this.#memory.capture(maxBytes, lend)
  }

  /**
   * Starts a session run: the memory (booted, or reset now) gets `session`'s pages, or, for a new
   * session, only the guarantee `capture` relies on (nothing above the booted state). Returns an error
   * message when the memory cannot be applied here (another build's, or larger than this module's cap).
   */
  restore(session: SessionMemory | undefined): string | undefined {
    return this.#memory.restore(session)
  }

  /**
   * Frees the image's handles, context and runtime. QuickJS checks on freeing a runtime that every
   * object was released (it aborts otherwise), so this doubles as a leak check of the booted state.
   */
  dispose(): void {
    if (this.#disposed) return
    this.#disposed = true
    this.hooks = undefined
    if (this.resident !== undefined) this.reset()
    this.#heap._free(this.#scratch)
    this.prelude.dispose()
    this.host.dispose()
    this.context.dispose()
    this.runtime.dispose()
  }
}
