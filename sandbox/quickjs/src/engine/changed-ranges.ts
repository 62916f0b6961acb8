import type { Buffer } from 'node:buffer'
import { PAGE_BYTES, ZEROS, type MemoryRun } from './booted-memory.js'

/**
 * The ranges of `view` below `top` that differ from the booted bytes `booted` (zeros above them), as
 * `[start, end)` pairs: what a session's capture copies. Where the booted state has data, page by page: once a
 * session ran, most of its 64 KiB blocks hold a changed page, and a block check first would compare those twice.
 * Above it (the heap the session grew: almost all its own, zeros at boot), 64 KiB blocks. The stack zone
 * `stack` was just zeroed, as it booted, and is skipped. The pages of `volatilePages` (the bytes that differ
 * from boot to boot) always go, so the restored memory is exactly the captured one, whatever image it lands on.
 */
export function changedRanges(
  view: Buffer,
  booted: Buffer,
  top: number,
  stack: MemoryRun | undefined,
  volatilePages: ReadonlySet<number>,
  hint: Uint32Array | undefined,
): number[] {
  const ranges: number[] = []
  const add = (start: number, end: number): void => {
    if (ranges.length > 0 && ranges[ranges.length - 1] === start) ranges[ranges.length - 1] = end
    else ranges.push(start, end)
  }
  // The pages the run started with changed (`hint`: the session's memory restored or left resident) most
  // likely still differ: they go with the state without a comparison (one that went back to its
  // booted bytes is kept as it is, which restores the same memory).
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
  return ranges
}
