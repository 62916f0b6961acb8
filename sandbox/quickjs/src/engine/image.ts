import { Buffer } from 'node:buffer'
import { randomFillSync } from 'node:crypto'
import type { QuickJSContext, QuickJSHandle, QuickJSRuntime } from 'quickjs-emscripten-core'
import { GUEST_PRELUDE } from '@ptc/sandbox'
import type { LoadedModule } from './module.js'

/** What the image's host functions and interrupt handler call: the session running on it. */
export interface ImageHooks {
  call(id: number, name: string, argsJson: string): void
  log(text: string): void
  finish(kind: number, payload: string): void
  shouldInterrupt(): boolean
}

/**
 * A QuickJS module booted once — a runtime, a context, the three host functions and the guest
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
  /** The prelude's function, `(host, bindingsJson) => { start, settle }`. */
  readonly prelude: QuickJSHandle
  /** The `host` object the prelude receives (`call`, `log`, `finish`). */
  readonly host: QuickJSHandle
  hooks: ImageHooks | undefined
  readonly #pages: MemoryRun[]
  readonly #seedAt: number
  #disposed = false

  private constructor(loaded: LoadedModule, runtime: QuickJSRuntime, context: QuickJSContext, prelude: QuickJSHandle, host: QuickJSHandle) {
    this.loaded = loaded
    this.runtime = runtime
    this.context = context
    this.prelude = prelude
    this.host = host
    this.#seedAt = locateRandomState(loaded, context)
    this.#pages = copyUsedMemory(loaded)
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
      ['call', ctx.newFunction('call', (id, nm, args) => hooks()?.call(ctx.getNumber(id), ctx.getString(nm), ctx.getString(args)))],
      ['log', ctx.newFunction('log', (_level, text) => hooks()?.log(ctx.getString(text)))],
      ['finish', ctx.newFunction('finish', (kind, payload) => hooks()?.finish(ctx.getNumber(kind), ctx.getString(payload)))],
    ] as const) {
      ctx.setProp(host, name, fn)
      fn.dispose()
    }
    const prelude = ctx.unwrapResult(ctx.evalCode(GUEST_PRELUDE, 'ptc-prelude.js'))
    booted.image = new EngineImage(loaded, rt, ctx, prelude, host)
    return booted.image
  }

  /** Gives the next run a fresh `Math.random` sequence. */
  reseed(): void {
    const word = new BigUint64Array(this.loaded.memory.buffer, this.#seedAt, 1)
    do randomFillSync(word)
    while (word[0] === 0n)
  }

  /** Puts the memory back as it was after boot: the run's every object, handle and job is gone. */
  reset(): void {
    const memory = new Uint8Array(this.loaded.memory.buffer)
    for (const run of this.#pages) {
      if (run.bytes === undefined) memory.fill(0, run.start, run.end)
      else memory.set(run.bytes, run.start)
    }
  }

  /**
   * Frees the image's handles, context and runtime. QuickJS checks on freeing a runtime that every
   * object was released (it aborts otherwise), so this doubles as a leak check of the booted state.
   */
  dispose(): void {
    if (this.#disposed) return
    this.#disposed = true
    this.hooks = undefined
    this.prelude.dispose()
    this.host.dispose()
    this.context.dispose()
    this.runtime.dispose()
  }
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
    throw new Error(`cannot locate ${loaded.variant}'s Math.random state (${found.length} candidates): this engine build is not supported`)
  }
  return found[0] as number
}

/** Zero bytes restored past the last non-zero page, in case the heap's last block ends in zeros. */
const MARGIN_BYTES = 64 * 1024
const PAGE_BYTES = 4096
/** Pages compared at once before looking at single pages. */
const BLOCK_PAGES = 16
const ZEROS = Buffer.alloc(PAGE_BYTES * BLOCK_PAGES)

/** A range of the memory as booted: its bytes, or `undefined` for all zeros. */
interface MemoryRun {
  readonly start: number
  readonly end: number
  readonly bytes: Uint8Array | undefined
}

/** The used page count of the last boot per variant: boots are deterministic, so it is checked, not searched. */
const usedHint = new Map<string, number>()

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
  let used = usedHint.get(loaded.variant) ?? 0
  const hintHolds = used > 0 && used + marginPages <= total && !zero(used - 1, used) && zero(used, used + marginPages)
  if (!hintHolds) {
    used = total
    while (used >= BLOCK_PAGES && zero(used - BLOCK_PAGES, used)) used -= BLOCK_PAGES
    while (used > 0 && zero(used - 1, used)) used--
    usedHint.set(loaded.variant, used)
  }
  const runs: MemoryRun[] = []
  let start = 0
  let runZero = true
  const flip = (page: number): void => {
    const to = page * PAGE_BYTES
    if (to > start) runs.push({ start, end: to, bytes: runZero ? undefined : new Uint8Array(buffer, start, to - start).slice() })
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
