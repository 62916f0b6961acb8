import { Buffer } from 'node:buffer'
import { createHash } from 'node:crypto'
import {
  PAGE_BYTES,
  STACK_ZONE_BYTES,
  copyUsedMemory,
  resetStack,
  topOfUsed,
  zeroBetween,
  type MemoryRun,
} from './booted-memory.js'
import { changedRanges } from './changed-ranges.js'
import type { LoadedModule } from './module.js'
import { sessionFacts, type FactsImage, type SessionFacts } from './session-facts.js'
import { KEPT_CAPTURE_BYTES, nextStateId, rangeBytes, takeSpare, type SessionMemory } from './session-memory.js'

/** The emscripten module's heap and allocator, as quickjs-emscripten's own memory helpers use them. */
export interface EngineHeap {
  UTF8ToString(pointer: number): string
  _malloc(bytes: number): number
  _free(pointer: number): void
}

/**
 * The memory side of an `EngineImage`: the booted state, copied when the image is made, put back after every
 * run (`reset`), and the session memory captured from it and restored onto it (`capture`, `restore`).
 */
export class ImageMemory {
  /**
   * The id of the session memory this image holds instead of its booted state (a session run's
   * memory stays in place after its capture, so the session's next run here needs no restore), or
   * undefined when it is booted.
   */
  resident: string | undefined
  /**
   * Session captures are copied into `#own`, a buffer the image reuses, instead of a new allocation
   * each (in inline isolation, where the host runs on this thread and a capture is never transferred;
   * a fresh 100 KiB allocation per run, and the collections it brings, cost more than the rest of the
   * capture). Only the last capture (`#lent`) views it; the next capture either supersedes it (the
   * run started on it) or gives it a copy of its bytes first.
   */
  keepsCaptures = false
  readonly #loaded: LoadedModule
  readonly #heap: EngineHeap
  readonly #pages: MemoryRun[]
  /** The largest zero run (the C stack below what boot used), reset by `resetStack`. */
  readonly #stack: MemoryRun | undefined
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
  #own: Uint8Array | undefined
  #lent: SessionMemory | undefined
  #fingerprint: string | undefined
  #u32 = new Uint32Array(0)

  /** Copies the booted state of `loaded`'s memory, as it is now. */
  constructor(loaded: LoadedModule, heap: EngineHeap) {
    this.#loaded = loaded
    this.#heap = heap
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

  /** Puts the memory back as it was after boot: the run's every object, handle and job is gone. */
  reset(): void {
    // After a capture the top is known; otherwise the run may have written anywhere.
    if (!this.#captured)
      this.#dirtyTop = Math.max(
        this.#dirtyTop,
        this.#facts?.breakAt === undefined ? this.#loaded.memory.buffer.byteLength : this.#heapEnd(),
      )
    this.#captured = false
    this.#startRanges = undefined
    this.resident = undefined
    const memory = new Uint8Array(this.#loaded.memory.buffer)
    for (const run of this.#pages) {
      if (run.bytes === undefined) memory.fill(0, run.start, run.end)
      else memory.set(run.bytes, run.start)
    }
    if (this.#stack !== undefined) resetStack(memory, this.#stack)
  }

  /** See `EngineImage.fingerprint`. */
  get fingerprint(): string {
    if (this.#fingerprint === undefined) {
      const booted = Buffer.from(this.#bootedBytes())
      for (const at of this.#sessionFacts().volatile) booted[at] = 0
      this.#fingerprint = createHash('sha256').update(this.#loaded.variant).update(booted).digest('hex').slice(0, 32)
    }
    return this.#fingerprint
  }

  /** Learns what sessions need to know about this build, booting images with `boot` (once per thread and variant). */
  async prepareSessions(boot: (loaded: LoadedModule) => FactsImage): Promise<void> {
    this.#facts ??= await sessionFacts(this.#loaded.variant, boot)
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
    const buffer = this.#loaded.memory.buffer
    const at = this.#facts?.breakAt
    if (at === undefined) return topOfUsed(Buffer.from(buffer))
    if (this.#u32.buffer !== buffer) this.#u32 = new Uint32Array(buffer)
    const brk = this.#u32[at >> 2] as number
    return Math.min(buffer.byteLength, Math.ceil(brk / PAGE_BYTES) * PAGE_BYTES)
  }

  /** See `EngineImage.locateBreak`. */
  locateBreak(): number | undefined {
    const words = (): Uint32Array => new Uint32Array(this.#loaded.memory.buffer, 0, this.#bootedEnd >> 2).slice()
    const before = words()
    const first = this.#heap._malloc(4 * 1024 * 1024)
    const middle = words()
    const second = this.#heap._malloc(8 * 1024 * 1024)
    const after = words()
    const size = this.#loaded.memory.buffer.byteLength
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

  /** See `EngineImage.capture`. */
  capture(maxBytes = Number.POSITIVE_INFINITY, lend = false): SessionMemory | { over: number } {
    const buffer = this.#loaded.memory.buffer
    const view = Buffer.from(buffer)
    const stack = this.#stack
    if (stack !== undefined) resetStack(new Uint8Array(buffer), stack)
    const booted = this.#bootedBytes()
    const { volatile, volatilePages } = this.#sessionFacts()
    const top = Math.max(this.#heapEnd(), ...volatile.map((at) => at + 1))
    const ranges = changedRanges(view, booted, top, stack, volatilePages, this.#startRanges)
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
    const id = nextStateId()
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

  /** See `EngineImage.restore`. */
  restore(session: SessionMemory | undefined): string | undefined {
    if (this.resident !== undefined) this.reset()
    if (session !== undefined && session.data.byteLength !== rangeBytes(session.ranges)) {
      return (
        `the session's memory is incomplete (${session.data.byteLength} bytes for ` +
        `${rangeBytes(session.ranges)} in its ranges)`
      )
    }
    if (session !== undefined && session.fingerprint !== this.fingerprint) {
      return (
        `the session's memory was made by another engine build (${session.fingerprint}, ` +
        `this one is ${this.fingerprint})`
      )
    }
    if (session !== undefined && session.byteLength > this.#loaded.memory.buffer.byteLength) {
      if (session.byteLength > this.#loaded.capBytes) {
        return (
          `the session's memory (${mib(session.byteLength)} MiB) does not fit this run's memory cap ` +
          `(${mib(this.#loaded.capBytes)} MiB)`
        )
      }
      // Grown through the engine's allocator, so the emscripten runtime sees the new size; reset after.
      // A block from the break up to the size needed (the break, not the memory's end, is where it goes).
      const brk = this.#heapEnd()
      const block = this.#heap._malloc(session.byteLength - Math.min(brk, session.byteLength - PAGE_BYTES))
      if (block !== 0) this.#heap._free(block)
      this.reset()
      if (block === 0 || this.#loaded.memory.buffer.byteLength < session.byteLength) {
        return `the session's memory (${mib(session.byteLength)} MiB) could not be allocated`
      }
    }
    if (this.#dirtyTop > this.#bootedEnd) {
      zeroBetween(Buffer.from(this.#loaded.memory.buffer), this.#bootedEnd, this.#dirtyTop)
      this.#dirtyTop = 0
    }
    if (session === undefined) return undefined
    const memory = new Uint8Array(this.#loaded.memory.buffer)
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
}

function mib(bytes: number): string {
  return (bytes / (1024 * 1024)).toFixed(1)
}
