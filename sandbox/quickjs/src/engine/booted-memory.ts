import { Buffer } from 'node:buffer'
import { BOOT_FACTS } from './boot-facts.js'
import { wasmDigest, type LoadedModule, type QuickJSVariantName } from './module.js'

/** Zero bytes restored past the last non-zero page, in case the heap's last block ends in zeros. */
const MARGIN_BYTES = 64 * 1024
export const PAGE_BYTES = 4096
/** A zero run at least this long is taken for the C stack (emscripten reserves 5 MiB below the heap). */
export const STACK_ZONE_BYTES = 1024 * 1024
/**
 * Pages compared at once: a block (before its single pages at boot; alone above the booted state, where it was
 * zeros).
 */
const BLOCK_PAGES = 16
export const ZEROS = Buffer.alloc(PAGE_BYTES * BLOCK_PAGES)
/** The step of the scan for the dirty top of the C stack (a trivial run dirties a few KiB of it)… */
const STACK_SCAN_BYTES = 16 * 1024
/** …and the clean steps in a row that end it. */
const STACK_CLEAN_BLOCKS = 4

/** A range of the memory as booted: its bytes, or `undefined` for all zeros. */
export interface MemoryRun {
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
export function copyUsedMemory(loaded: LoadedModule): MemoryRun[] {
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
 * The C stack grows down from the top of `zone`, so a run dirties a contiguous top part of it.
 * That part is found by comparing 16 KiB blocks with zeros from the top down (64 KiB of clean blocks
 * in a row end it) and zeroed; the rest of the 5 MiB is never touched, so a fresh image's first reset
 * does not fault in pages nobody used. (Stack memory below the stack pointer is dead to QuickJS:
 * zeroing it is hygiene, not correctness.)
 */
export function resetStack(memory: Uint8Array, zone: MemoryRun): void {
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

/** The end of the last page holding a non-zero byte (a WebAssembly memory is whole 64 KiB blocks). */
export function topOfUsed(view: Buffer): number {
  let end = view.byteLength
  while (end >= ZEROS.length && view.compare(ZEROS, 0, ZEROS.length, end - ZEROS.length, end) === 0) end -= ZEROS.length
  while (end > 0 && view.compare(ZEROS, 0, PAGE_BYTES, end - PAGE_BYTES, end) === 0) end -= PAGE_BYTES
  return end
}

/** Zeroes every non-zero block of `[from, to)` (reading a block nobody wrote does not commit it). */
export function zeroBetween(view: Buffer, from: number, to: number): void {
  const end = Math.min(to, view.byteLength)
  for (let start = from; start < end; start += ZEROS.length) {
    const stop = Math.min(end, start + ZEROS.length)
    if (view.compare(ZEROS, 0, stop - start, start, stop) !== 0) view.fill(0, start, stop)
  }
}
