import { Buffer } from 'node:buffer'
import { createHash, randomBytes, randomFillSync } from 'node:crypto'
import type { EitherFFI, QuickJSContext, QuickJSHandle, QuickJSRuntime } from 'quickjs-emscripten-core'
import { GUEST_PRELUDE } from '@ptc/sandbox/backend'
import { BOOT_FACTS } from './boot-facts.js'
import { loadModule, wasmDigest, type LoadedModule, type QuickJSVariantName } from './module.js'

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
  /** The prelude's per-run function, `(host, bindingsJson, queueJson, maxOutputBytes) => { start, settle, takeCalls }` (the prelude itself ran at boot). */
  readonly prelude: QuickJSHandle
  /** The `host` object the prelude receives (`limit`, `queued`, `log`, `finish`; no `call`: queue mode). */
  readonly host: QuickJSHandle
  hooks: ImageHooks | undefined
  /**
   * The id of the session memory this image holds instead of its booted state (a session run's
   * memory stays in place after its capture, so the session's next run here needs no restore), or
   * undefined when it is booted.
   */
  resident: string | undefined
  readonly #pages: MemoryRun[]
  /** The largest zero run (the C stack below what boot used), reset by `resetStack`. */
  readonly #stack: MemoryRun | undefined
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
  /** Where the booted state ends: above it the booted memory is all zeros. */
  readonly #bootedEnd: number
  /**
   * Bytes above `#bootedEnd` may be non-zero up to here (reset does not clear them: nothing reads them
   * unless a session captures). A session run's capture knows its top exactly; after another run, the
   * whole memory may be dirty.
   */
  #dirtyTop = 0
  /** The booted bytes of `[0, #bootedEnd)`, the stack zone zeroed (what `capture` compares with). */
  #booted: Buffer | undefined
  /** What sessions need to know about this build (`sessionFacts`), once `prepareSessions()` ran. */
  #facts: SessionFacts | undefined
  /** `capture()` ran since the last reset: `#dirtyTop` is exact. */
  #captured = false
  /** The changed ranges of the session memory the run started with (restored, or left resident by a capture). */
  #startRanges: Uint32Array | undefined
  /**
   * Session captures are copied into `#own`, a buffer the image reuses, instead of a new allocation
   * each (in inline isolation, where the host runs on this thread and a capture is never transferred;
   * a fresh 100 KiB allocation per run, and the collections it brings, cost more than the rest of the
   * capture). Only the last capture (`#lent`) views it; the next capture either supersedes it (the
   * run started on it) or gives it a copy of its bytes first.
   */
  keepsCaptures = false
  #own: Uint8Array | undefined
  #lent: SessionMemory | undefined
  #fingerprint: string | undefined

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
    const pages = copyUsedMemory(loaded)
    let stack: MemoryRun | undefined
    for (const run of pages) {
      if (
        run.bytes === undefined &&
        run.end - run.start >= STACK_ZONE_BYTES &&
        (stack === undefined || run.end - run.start > stack.end - stack.start)
      )
        stack = run
    }
    this.#stack = stack
    this.#pages = pages.filter((run) => run !== stack)
    this.#bootedEnd = pages.reduce((end, run) => Math.max(end, run.end), 0)
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
    const word = new BigUint64Array(this.loaded.memory.buffer, this.#seedAt, 1)
    do word[0] = randomWord()
    while (word[0] === 0n)
  }

  /** Puts the memory back as it was after boot: the run's every object, handle and job is gone. */
  reset(): void {
    // After a capture the top is known; otherwise the run may have written anywhere.
    if (!this.#captured)
      this.#dirtyTop = Math.max(
        this.#dirtyTop,
        this.#facts?.breakAt === undefined ? this.loaded.memory.buffer.byteLength : this.#heapEnd(),
      )
    this.#captured = false
    this.#startRanges = undefined
    this.resident = undefined
    const memory = new Uint8Array(this.loaded.memory.buffer)
    for (const run of this.#pages) {
      if (run.bytes === undefined) memory.fill(0, run.start, run.end)
      else memory.set(run.bytes, run.start)
    }
    if (this.#stack !== undefined) this.#resetStack(memory, this.#stack)
  }

  /**
   * The C stack grows down from the top of `zone`, so a run dirties a contiguous top part of it.
   * That part is found by comparing 16 KiB blocks with zeros from the top down (64 KiB of clean blocks
   * in a row end it) and zeroed; the rest of the 5 MiB is never touched, so a fresh image's first reset
   * does not fault in pages nobody used. (Stack memory below the stack pointer is dead to QuickJS:
   * zeroing it is hygiene, not correctness.)
   */
  #resetStack(memory: Uint8Array, zone: MemoryRun): void {
    const view = Buffer.from(memory.buffer, memory.byteOffset, memory.byteLength)
    let low = zone.end
    let clean = 0
    for (let end = zone.end; end > zone.start && clean < STACK_CLEAN_BLOCKS; end -= STACK_SCAN_BYTES) {
      const start = Math.max(zone.start, end - STACK_SCAN_BYTES)
      if (view.compare(ZEROS, 0, end - start, start, end) === 0) clean++
      else {
        clean = 0
        low = start
      }
    }
    if (low < zone.end) memory.fill(0, low, zone.end)
  }

  /**
   * What identifies this image's booted state (engine variant and booted bytes, but for the few bytes
   * that differ from boot to boot: `volatileBytes`): a session's memory applies only to an image with
   * the same fingerprint. Needs `prepareSessions()`.
   */
  get fingerprint(): string {
    if (this.#fingerprint === undefined) {
      const booted = Buffer.from(this.#bootedBytes())
      for (const at of this.#sessionFacts().volatile) booted[at] = 0
      this.#fingerprint = createHash('sha256').update(this.loaded.variant).update(booted).digest('hex').slice(0, 32)
    }
    return this.#fingerprint
  }

  /** Learns what sessions need to know about this build (once per thread and variant: `sessionFacts`). */
  async prepareSessions(): Promise<void> {
    this.#facts ??= await sessionFacts(this.loaded.variant)
  }

  get sessionsPrepared(): boolean {
    return this.#facts !== undefined
  }

  #sessionFacts(): SessionFacts {
    if (this.#facts === undefined) throw new Error('EngineImage: prepareSessions() must run before a session run')
    return this.#facts
  }

  /**
   * The end of what the engine's allocator uses (its break, page-aligned): nothing above it is written.
   * Without a located break word, the end of the last non-zero page (a scan of the whole memory).
   */
  #heapEnd(): number {
    const buffer = this.loaded.memory.buffer
    const at = this.#facts?.breakAt
    if (at === undefined) return topOfUsed(Buffer.from(buffer))
    this.#views()
    const brk = this.#u32[at >> 2] as number
    return Math.min(buffer.byteLength, Math.ceil(brk / PAGE_BYTES) * PAGE_BYTES)
  }

  /**
   * Finds the word that holds the allocator's break (emscripten's sbrk pointer): the only word of the
   * booted state that grows past a 4 MiB and then an 8 MiB block by about as much, to an address above
   * both. Undefined when not exactly one word does (the engine then scans the memory instead).
   */
  locateBreak(): number | undefined {
    const words = (): Uint32Array => new Uint32Array(this.loaded.memory.buffer, 0, this.#bootedEnd >> 2).slice()
    const before = words()
    const first = this.#heap._malloc(4 * 1024 * 1024)
    const middle = words()
    const second = this.#heap._malloc(8 * 1024 * 1024)
    const after = words()
    const size = this.loaded.memory.buffer.byteLength
    this.#heap._free(second)
    this.#heap._free(first)
    if (first === 0 || second === 0) return undefined
    const found: number[] = []
    for (let i = 0; i < after.length; i++) {
      const grew1 = (middle[i] as number) - (before[i] as number)
      const grew2 = (after[i] as number) - (middle[i] as number)
      const value = after[i] as number
      if (
        grew1 >= 4 * 1024 * 1024 &&
        grew1 <= 5 * 1024 * 1024 &&
        grew2 >= 8 * 1024 * 1024 &&
        grew2 <= 9 * 1024 * 1024 &&
        value >= second + 8 * 1024 * 1024 &&
        value <= size
      )
        found.push(i * 4)
    }
    // The break is the highest of the words that track the heap's top (the allocator's top chunk is below it).
    const best = found.reduce<number | undefined>(
      (max, at) => (max === undefined || (after[at >> 2] as number) > (after[max >> 2] as number) ? at : max),
      undefined,
    )
    return best !== undefined && found.filter((at) => after[at >> 2] === after[best >> 2]).length === 1
      ? best
      : undefined
  }

  /**
   * The state a session run left, as the pages that differ from the booted image; call it once the run
   * ended and released its handles. The memory stays as it is (`resident`) until a `reset()`. When
   * the changed bytes are more than `maxBytes`, nothing is copied and `{ over }` says how many there were. Everything above the booted state was zero when
   * the session's run started (`restore`), so no byte of another run's can be in it. `lend`: the
   * memory stays resident, so its bytes may go to the image's own buffer (`keepsCaptures`).
   */
  capture(maxBytes = Number.POSITIVE_INFINITY, lend = false): SessionMemory | { over: number } {
    const buffer = this.loaded.memory.buffer
    const view = Buffer.from(buffer)
    const stack = this.#stack
    if (stack !== undefined) this.#resetStack(new Uint8Array(buffer), stack)
    const booted = this.#bootedBytes()
    // The pages of the bytes that differ from boot to boot always go with the session: the restored
    // memory is then exactly the captured one, whatever image it lands on.
    const { volatile, volatilePages } = this.#sessionFacts()
    const top = Math.max(this.#heapEnd(), ...volatile.map((at) => at + 1))
    // Changed ranges, [start, end) pairs. Where the booted state has data, page by page: once a session
    // ran, most of its 64 KiB blocks hold a changed page, and a block check first would compare those
    // twice. Above it (the heap the session grew: almost all its own, zeros at boot), 64 KiB blocks. The
    // stack zone was just zeroed, as it booted, and is skipped.
    const ranges: number[] = []
    const add = (start: number, end: number): void => {
      if (ranges.length > 0 && ranges[ranges.length - 1] === start) ranges[ranges.length - 1] = end
      else ranges.push(start, end)
    }
    // The pages the run started with changed (the session's memory restored or left resident) most
    // likely still differ: they go with the state without a comparison (one that went back to its
    // booted bytes is kept as it is, which restores the same memory).
    const hint = this.#startRanges
    let h = 0
    const known = (at: number, end: number): boolean => {
      if (hint === undefined) return false
      while (h < hint.length && (hint[h + 1] as number) <= at) h += 2
      return h < hint.length && (hint[h] as number) <= at && end <= (hint[h + 1] as number)
    }
    const scan = (from: number, to: number): void => {
      let at = from
      for (const bootedEnd = Math.min(to, booted.length); at < bootedEnd; ) {
        const end = Math.min(bootedEnd, (Math.floor(at / PAGE_BYTES) + 1) * PAGE_BYTES)
        if (
          known(at, end) ||
          view.compare(booted, at, end, at, end) !== 0 ||
          volatilePages.has(Math.floor(at / PAGE_BYTES))
        )
          add(at, end)
        at = end
      }
      for (; at < to; ) {
        const end = Math.min(to, (Math.floor(at / ZEROS.length) + 1) * ZEROS.length)
        if (known(at, end) || view.compare(ZEROS, 0, end - at, at, end) !== 0) add(at, end)
        at = end
      }
    }
    if (stack === undefined || stack.start >= top) scan(0, top)
    else {
      scan(0, stack.start)
      scan(Math.min(top, stack.end), top)
    }
    let size = 0
    for (let i = 0; i < ranges.length; i += 2) size += (ranges[i + 1] as number) - (ranges[i] as number)
    // Over the session's budget: nothing is copied (a memory bomb near the cap would cost the host its size).
    if (size > maxBytes) {
      this.#dirtyTop = Math.max(this.#dirtyTop, top)
      return { over: size }
    }
    // The last capture that views `#own`: when the run started on it (still resident), this one
    // supersedes it and it loses its view (a host that still read it would find no data, not another
    // state's); when the memory was reset since (another run, a restore), it may still be the state a
    // session keeps, and gets its own copy before the buffer is reused. So does it when this capture is a
    // suspension's (not lent): the session keeps its state from before the run while the run waits.
    const lent = this.#lent
    this.#lent = undefined
    if (lent !== undefined)
      lent.data = lent.id === this.resident && lend ? new Uint8Array(0) : new Uint8Array(lent.data)
    const keep = lend && this.keepsCaptures && size <= KEPT_CAPTURE_BYTES
    if (keep && this.#own === undefined) this.#own = new Uint8Array(KEPT_CAPTURE_BYTES)
    // Every byte is written below: a new buffer is not zeroed first.
    const data =
      keep && this.#own !== undefined
        ? this.#own.subarray(0, size)
        : (takeSpare(size) ?? new Uint8Array(Buffer.allocUnsafeSlow(size).buffer, 0, size))
    for (let i = 0, at = 0; i < ranges.length; i += 2)
      at += view.copy(data, at, ranges[i] as number, ranges[i + 1] as number)
    this.#dirtyTop = Math.max(this.#dirtyTop, top)
    this.#captured = true
    const captured = Uint32Array.from(ranges)
    this.#startRanges = captured
    const id = `${STATE_ID_PREFIX}-${++stateIds}`
    this.resident = id
    const memory: SessionMemory = {
      id,
      fingerprint: this.fingerprint,
      byteLength: buffer.byteLength,
      ranges: captured,
      data,
    }
    if (keep) this.#lent = memory
    return memory
  }

  /**
   * Starts a session run: the memory (booted, or reset now) gets `session`'s pages, or, for a new
   * session, only the guarantee `capture` relies on (nothing above the booted state). Returns an error
   * message when the memory cannot be applied here (another build's, or larger than this module's cap).
   */
  restore(session: SessionMemory | undefined): string | undefined {
    if (this.resident !== undefined) this.reset()
    if (session !== undefined && session.data.byteLength !== rangeBytes(session.ranges)) {
      return `the session's memory is incomplete (${session.data.byteLength} bytes for ${rangeBytes(session.ranges)} in its ranges)`
    }
    if (session !== undefined && session.fingerprint !== this.fingerprint) {
      return `the session's memory was made by another engine build (${session.fingerprint}, this one is ${this.fingerprint})`
    }
    if (session !== undefined && session.byteLength > this.loaded.memory.buffer.byteLength) {
      if (session.byteLength > this.loaded.capBytes) {
        return `the session's memory (${mib(session.byteLength)} MiB) does not fit this run's memory cap (${mib(this.loaded.capBytes)} MiB)`
      }
      // Grown through the engine's allocator, so the emscripten runtime sees the new size; reset after.
      // A block from the break up to the size needed (the break, not the memory's end, is where it goes).
      const brk = this.#heapEnd()
      const block = this.#heap._malloc(session.byteLength - Math.min(brk, session.byteLength - PAGE_BYTES))
      if (block !== 0) this.#heap._free(block)
      this.reset()
      if (block === 0 || this.loaded.memory.buffer.byteLength < session.byteLength) {
        return `the session's memory (${mib(session.byteLength)} MiB) could not be allocated`
      }
    }
    if (this.#dirtyTop > this.#bootedEnd) {
      zeroBetween(Buffer.from(this.loaded.memory.buffer), this.#bootedEnd, this.#dirtyTop)
      this.#dirtyTop = 0
    }
    if (session === undefined) return undefined
    const memory = new Uint8Array(this.loaded.memory.buffer)
    const { ranges, data } = session
    this.#startRanges = ranges
    for (let i = 0, at = 0; i < ranges.length; i += 2) {
      const from = ranges[i] as number
      const to = ranges[i + 1] as number
      memory.set(data.subarray(at, at + to - from), from)
      at += to - from
    }
    return undefined
  }

  /** The booted bytes up to `#bootedEnd` in one buffer (made on first use: only sessions compare). */
  #bootedBytes(): Buffer {
    if (this.#booted === undefined) {
      const booted = Buffer.alloc(this.#bootedEnd)
      for (const run of this.#pages) if (run.bytes !== undefined) booted.set(run.bytes, run.start)
      this.#booted = booted
    }
    return this.#booted
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

/**
 * Buffers of session captures the host let go of, sent back to this worker thread (`offerSpare`): a
 * capture of about their size is written into one instead of a new allocation. In worker isolation
 * every session run's capture moves to the host as a transferred buffer, and a new one per run
 * (faulted in here, adopted as external memory there) cost more than the capture, mostly in the host's
 * garbage collections. A buffer here belongs to this thread alone: the host's view of it was detached
 * by the transfer, so no state the host still held could ever read what is written into it.
 */
const spares: ArrayBuffer[] = []
const MAX_SPARES = 4
/** A spare is used for a capture at most this much smaller than it (the rest travels with the capture unused). */
const SPARE_SLACK_BYTES = 64 * 1024

/** Keeps `buffer` for a later capture (`takeSpare`) in place of the oldest kept, unless it is too large. */
export function offerSpare(buffer: ArrayBuffer): void {
  if (buffer.byteLength === 0 || buffer.byteLength > KEPT_CAPTURE_BYTES) return
  if (spares.length >= MAX_SPARES) spares.shift()
  spares.push(buffer)
}

function takeSpare(size: number): Uint8Array | undefined {
  const i = spares.findIndex((b) => b.byteLength >= size && b.byteLength - size <= SPARE_SLACK_BYTES)
  if (i === -1) return undefined
  const [buffer] = spares.splice(i, 1)
  return new Uint8Array(buffer as ArrayBuffer, 0, size)
}

/** The emscripten module's heap and allocator, as quickjs-emscripten's own memory helpers use them. */
interface EngineHeap {
  UTF8ToString(pointer: number): string
  _malloc(bytes: number): number
  _free(pointer: number): void
}

/**
 * Random 64-bit words for `reseed`, drawn from the CSPRNG 512 at a time (one `randomFillSync` per run
 * cost about 14 µs here, a tenth of a warm run); each word is handed out once.
 */
const randomWords = new BigUint64Array(512)
let randomLeft = 0

function randomWord(): bigint {
  if (randomLeft === 0) {
    randomFillSync(randomWords)
    randomLeft = randomWords.length
  }
  randomLeft--
  const word = randomWords[randomLeft] as bigint
  randomWords[randomLeft] = 0n
  return word
}

/** The 64-bit xorshift64* step QuickJS's `Math.random` takes. */
function xorshift64(s: bigint): bigint {
  const M = (1n << 64n) - 1n
  s ^= s >> 12n
  s = (s ^ (s << 25n)) & M
  s ^= s >> 27n
  return s
}

/** The value `Math.random` returns for state `s` (QuickJS: the top 52 bits of `s * C` as a mantissa). */
function randomOf(s: bigint): number {
  const m = (s * 0x2545f4914f6cdd1dn) & ((1n << 64n) - 1n)
  const bits = new BigUint64Array([(m >> 12n) | 0x3ff0000000000000n])
  return (new Float64Array(bits.buffer)[0] as number) - 1
}

/** How far into the context struct to look for the random state (both variants keep it in the first 1 KiB). */
const CONTEXT_SPAN = 4096

function locateRandomState(loaded: LoadedModule, ctx: QuickJSContext): number {
  const base = (ctx as unknown as { ctx: { value: number } }).ctx.value
  const random = ctx.unwrapResult(ctx.evalCode('Math.random'))
  const read = (): BigUint64Array => new BigUint64Array(loaded.memory.buffer.slice(base, base + CONTEXT_SPAN))
  const before = read()
  const out = ctx.unwrapResult(ctx.callFunction(random, ctx.undefined))
  const value = ctx.getNumber(out)
  out.dispose()
  random.dispose()
  const after = read()
  const found: number[] = []
  for (let i = 0; i < before.length; i++) {
    const b = before[i] as bigint
    const a = after[i] as bigint
    if (a !== b && xorshift64(b) === a && randomOf(a) === value) found.push(base + i * 8)
  }
  if (found.length !== 1) {
    throw new Error(
      `cannot locate ${loaded.variant}'s Math.random state (${found.length} candidates): this engine build is not supported`,
    )
  }
  return found[0] as number
}

/** Zero bytes restored past the last non-zero page, in case the heap's last block ends in zeros. */
const MARGIN_BYTES = 64 * 1024
const PAGE_BYTES = 4096
/** A zero run at least this long is taken for the C stack (emscripten reserves 5 MiB below the heap). */
const STACK_ZONE_BYTES = 1024 * 1024
/** Pages compared at once: a block (before its single pages at boot; alone above the booted state, where it was zeros). */
const BLOCK_PAGES = 16
const ZEROS = Buffer.alloc(PAGE_BYTES * BLOCK_PAGES)
/** Captures up to this size reuse the image's buffer (`keepsCaptures`); larger ones are allocated (their copy costs more than the allocation). */
const KEPT_CAPTURE_BYTES = 1024 * 1024
/** The step of the scan for the dirty top of the C stack (a trivial run dirties a few KiB of it)… */
const STACK_SCAN_BYTES = 16 * 1024
/** …and the clean steps in a row that end it. */
const STACK_CLEAN_BLOCKS = 4

/** A range of the memory as booted: its bytes, or `undefined` for all zeros. */
interface MemoryRun {
  readonly start: number
  readonly end: number
  readonly bytes: Uint8Array | undefined
}

/**
 * The used page count of the last boot per variant: boots are deterministic, so it is checked, not searched.
 * Searching reads every page of a fresh memory from the top down, and reading a page no one wrote costs a
 * page fault: the copy took 53-124 ms of each of four workers booting at once on this machine, 17-32 ms with
 * the count. An engine worker takes the count its pool learned from its first worker (`adoptUsedPages`), and the
 * first boot of a process the count this package ships for its WebAssembly file (`BOOT_FACTS`).
 */
const usedHint = new Map<string, number>()

/** The used page count the boots of `variant` found on this thread (`copyUsedMemory`), if one booted. */
export function usedPages(variant: QuickJSVariantName): number | undefined {
  return usedHint.get(variant)
}

/** Takes `pages` (another thread's `usedPages`) as the hint of `variant`'s boots, unless this thread has one. */
export function adoptUsedPages(variant: QuickJSVariantName, pages: number): void {
  if (!usedHint.has(variant) && Number.isSafeInteger(pages) && pages > 0) usedHint.set(variant, pages)
}

/**
 * The used page count of a boot of `variant` as this package ships it (`BOOT_FACTS`), when the WebAssembly file
 * this thread compiled is the one it was found with: the first boot of a process checks it instead of searching.
 */
function shippedUsedPages(variant: QuickJSVariantName): number | undefined {
  const facts = BOOT_FACTS[variant]
  return wasmDigest(variant) === facts.wasmSha256 ? facts.usedPages : undefined
}

/**
 * The used page count of a booted memory, found by reading it: the pages up to the last one that is not all
 * zeros. What `copyUsedMemory` searches for, and what `BOOT_FACTS` records (`scripts/boot-facts.ts`).
 */
export function searchUsedPages(buffer: ArrayBuffer): number {
  // A memory's size is whole WebAssembly pages (64 KiB), so its used top is whole 4 KiB pages too.
  return topOfUsed(Buffer.from(buffer)) / PAGE_BYTES
}

/**
 * The used prefix of a fresh module's memory — data, stack and heap up to the last non-zero page (the
 * allocator's top-chunk header lies above every allocated block), plus a margin — as runs of pages
 * with data and runs of zero pages (most of it: the stack is mostly untouched). Zero runs cost no
 * copy here and a `fill` on reset.
 */
function copyUsedMemory(loaded: LoadedModule): MemoryRun[] {
  const buffer = loaded.memory.buffer
  const view = Buffer.from(buffer)
  const total = Math.floor(buffer.byteLength / PAGE_BYTES)
  const zero = (from: number, to: number): boolean =>
    view.compare(ZEROS, 0, (to - from) * PAGE_BYTES, from * PAGE_BYTES, to * PAGE_BYTES) === 0
  const marginPages = MARGIN_BYTES / PAGE_BYTES
  const hint = usedHint.get(loaded.variant) ?? shippedUsedPages(loaded.variant) ?? 0
  const hintHolds = hint > 0 && hint + marginPages <= total && !zero(hint - 1, hint) && zero(hint, hint + marginPages)
  const runs = hintHolds ? runsBelow(buffer, hint, zero) : undefined
  // Below the heap lies the C stack's zone, untouched but for its top: a count that ends below it (data
  // followed by the zone's zeros passes the check above) is wrong, and is searched past.
  if (runs === undefined || !runs.some((run) => run.bytes === undefined && run.end - run.start >= STACK_ZONE_BYTES)) {
    const used = searchUsedPages(buffer)
    usedHint.set(loaded.variant, used)
    return runsBelow(buffer, used, zero)
  }
  usedHint.set(loaded.variant, hint)
  return runs
}

/** The runs of pages with data and of zero pages below page `used`, then a zero margin above it. */
function runsBelow(buffer: ArrayBuffer, used: number, zero: (from: number, to: number) => boolean): MemoryRun[] {
  const runs: MemoryRun[] = []
  let start = 0
  let runZero = true
  const flip = (page: number): void => {
    const to = page * PAGE_BYTES
    if (to > start)
      runs.push({ start, end: to, bytes: runZero ? undefined : new Uint8Array(buffer, start, to - start).slice() })
    start = to
    runZero = !runZero
  }
  for (let page = 0; page < used; ) {
    const blockEnd = Math.min(used, page + BLOCK_PAGES)
    if (zero(page, blockEnd)) {
      if (!runZero) flip(page)
      page = blockEnd
      continue
    }
    for (; page < blockEnd; page++) if (zero(page, page + 1) !== runZero) flip(page)
  }
  if (!runZero) flip(used)
  runs.push({ start, end: Math.min(buffer.byteLength, used * PAGE_BYTES + MARGIN_BYTES), bytes: undefined })
  return runs
}

/**
 * A session's engine state: the pages of a module's memory that differ from its booted image
 * (`EngineImage.capture`), structured-cloneable and transferable.
 */
export interface SessionMemory {
  /** Names this state: an image holding it (`EngineImage.resident`) need not restore it. */
  id: string
  /** The booted image the pages apply to (`EngineImage.fingerprint`). */
  fingerprint: string
  /** The memory's size when captured: the module grows to it before the pages are written. */
  byteLength: number
  /** The changed ranges of the memory, `[start, end)` pairs, ascending. */
  ranges: Uint32Array
  /** Their bytes, in the same order. */
  data: Uint8Array
}

/** What session runs need to know about a build, found once per thread and variant (`sessionFacts`). */
interface SessionFacts {
  /** Offsets of the booted bytes that differ from one boot to the next. */
  readonly volatile: readonly number[]
  /** The page numbers (`PAGE_BYTES`) those bytes are on. */
  readonly volatilePages: ReadonlySet<number>
  /** Where the allocator's break is kept (`EngineImage.locateBreak`), when found. */
  readonly breakAt: number | undefined
}

const facts = new Map<string, Promise<SessionFacts>>()

/** State ids: unique per thread by the counter, across threads and processes by the random prefix. */
const STATE_ID_PREFIX = randomBytes(6).toString('hex')
let stateIds = 0

/**
 * Boots two throwaway modules and compares them word by word: the booted bytes that differ from one
 * boot to the next (two 8-byte seeds QuickJS draws when it creates a context, in bellard's 2025-09
 * build); then locates the allocator's break word in one of them.
 */
function sessionFacts(variant: QuickJSVariantName): Promise<SessionFacts> {
  let found = facts.get(variant)
  if (found === undefined) {
    found = (async () => {
      const images = [
        EngineImage.boot(await loadModule(variant, 0)),
        EngineImage.boot(await loadModule(variant, 0)),
      ] as const
      const [a, b] = images.map((image) => Buffer.from(image.loaded.memory.buffer)) as [Buffer, Buffer]
      const end = Math.min(a.length, b.length)
      const offsets: number[] = []
      for (let start = 0; start < end; start += PAGE_BYTES) {
        const stop = Math.min(end, start + PAGE_BYTES)
        if (a.compare(b, start, stop, start, stop) === 0) continue
        // Whole 8-byte words: a byte of a seed may happen to be equal in the two boots.
        for (let at = start; at < stop; at += 8)
          if (a.compare(b, at, at + 8, at, at + 8) !== 0) for (let i = 0; i < 8; i++) offsets.push(at + i)
      }
      const breakAt = images[0].locateBreak()
      for (const image of images) image.dispose()
      return {
        volatile: Object.freeze(offsets),
        volatilePages: new Set(offsets.map((at) => Math.floor(at / PAGE_BYTES))),
        breakAt,
      }
    })()
    facts.set(variant, found)
  }
  return found
}

/** The end of the last page holding a non-zero byte (a WebAssembly memory is whole 64 KiB blocks). */
function topOfUsed(view: Buffer): number {
  let end = view.byteLength
  while (end >= ZEROS.length && view.compare(ZEROS, 0, ZEROS.length, end - ZEROS.length, end) === 0) end -= ZEROS.length
  while (end > 0 && view.compare(ZEROS, 0, PAGE_BYTES, end - PAGE_BYTES, end) === 0) end -= PAGE_BYTES
  return end
}

function rangeBytes(ranges: Uint32Array): number {
  let size = 0
  for (let i = 0; i + 1 < ranges.length; i += 2) size += (ranges[i + 1] as number) - (ranges[i] as number)
  return size
}

/** Zeroes every non-zero block of `[from, to)` (reading a block nobody wrote does not commit it). */
function zeroBetween(view: Buffer, from: number, to: number): void {
  const end = Math.min(to, view.byteLength)
  for (let start = from; start < end; start += ZEROS.length) {
    const stop = Math.min(end, start + ZEROS.length)
    if (view.compare(ZEROS, 0, stop - start, start, stop) !== 0) view.fill(0, start, stop)
  }
}

function mib(bytes: number): string {
  return (bytes / (1024 * 1024)).toFixed(1)
}
