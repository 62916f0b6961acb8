import { randomBytes } from 'node:crypto'

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

/**
 * Captures up to this size reuse the image's buffer (`keepsCaptures`); larger ones are allocated (their copy
 * costs more than the allocation).
 */
export const KEPT_CAPTURE_BYTES = 1024 * 1024

/** State ids: unique per thread by the counter, across threads and processes by the random prefix. */
const STATE_ID_PREFIX = randomBytes(6).toString('hex')
let stateIds = 0

/** A fresh `SessionMemory.id`. */
export function nextStateId(): string {
  return `${STATE_ID_PREFIX}-${++stateIds}`
}

/** The bytes `ranges` (`SessionMemory.ranges`) cover. */
export function rangeBytes(ranges: Uint32Array): number {
  let size = 0
  for (let i = 0; i + 1 < ranges.length; i += 2) size += (ranges[i + 1] as number) - (ranges[i] as number)
  return size
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

/** A kept buffer (`offerSpare`) viewed as `size` bytes, when one fits. */
export function takeSpare(size: number): Uint8Array | undefined {
  const i = spares.findIndex((b) => b.byteLength >= size && b.byteLength - size <= SPARE_SLACK_BYTES)
  if (i === -1) return undefined
  const [buffer] = spares.splice(i, 1)
  return new Uint8Array(buffer as ArrayBuffer, 0, size)
}
