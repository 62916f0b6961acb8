import { SandboxUsageError } from '../../errors.js'
import { WRITTEN } from './codec.js'
import {
  FIXED_HEADER_BYTES,
  HEADER_TAG_BYTES,
  MAGIC,
  MIN_SEGMENT_BYTES,
  SEGMENTS,
  TAG_BYTES,
  hmac,
  hmacSliced,
  idBytes,
  keyBytes,
  type SnapshotIdentity,
  type SnapshotKey,
} from './format.js'

/** Seals `payload` for `identity`: compressed, bound to the build and session, authenticated with `key`. */
export function sealSnapshot(payload: Uint8Array, identity: SnapshotIdentity, key: SnapshotKey): Uint8Array {
  if (!(payload instanceof Uint8Array)) throw new SandboxUsageError('sealSnapshot: the payload must be a Uint8Array')
  const segmentBytes = segmentBytesFor(payload.byteLength)
  const segments = segmentsOf(payload, segmentBytes).map((segment) => WRITTEN.compressSync(segment))
  const { out, secret, total } = sealLayout(
    { version: WRITTEN.version, identity, segments, segmentBytes, length: payload.byteLength },
    key,
  )
  hmac(secret, out.subarray(0, total - TAG_BYTES)).copy(out, total - TAG_BYTES)
  return out
}

/**
 * `sealSnapshot` without holding the event loop: the compression runs on libuv's thread pool and the
 * HMAC in slices between turns of the loop. For a host that seals large states while serving others.
 */
export async function sealSnapshotAsync(
  payload: Uint8Array,
  identity: SnapshotIdentity,
  key: SnapshotKey,
): Promise<Uint8Array> {
  if (!(payload instanceof Uint8Array)) throw new SandboxUsageError('sealSnapshot: the payload must be a Uint8Array')
  const segmentBytes = segmentBytesFor(payload.byteLength)
  const segments = await Promise.all(segmentsOf(payload, segmentBytes).map((segment) => WRITTEN.compress(segment)))
  const { out, secret, total } = sealLayout(
    { version: WRITTEN.version, identity, segments, segmentBytes, length: payload.byteLength },
    key,
  )
  ;(await hmacSliced(secret, out.subarray(0, total - TAG_BYTES))).copy(out, total - TAG_BYTES)
  return out
}

/** The uncompressed length of each segment of a `length`-byte payload (64 KiB multiples; 0 when empty). */
function segmentBytesFor(length: number): number {
  if (length === 0) return 0
  const count = Math.max(1, Math.min(SEGMENTS, Math.floor(length / MIN_SEGMENT_BYTES)))
  return Math.ceil(length / count / 65_536) * 65_536
}

function segmentsOf(payload: Uint8Array, segmentBytes: number): Uint8Array[] {
  const segments: Uint8Array[] = []
  for (let at = 0; at < payload.byteLength; at += segmentBytes) segments.push(payload.subarray(at, at + segmentBytes))
  return segments
}

/**
 * Lays out a snapshot whose payload is one compressed segment, with any version. For tests, which forge
 * authentic snapshots that `sealSnapshot` would never write (`segmentBytes` defaults to `length`).
 */
export function _sealRaw(
  parts: { version: number; identity: SnapshotIdentity; compressed: Uint8Array; length: number; segmentBytes?: number },
  key: SnapshotKey,
): Uint8Array {
  const { out, secret, total } = sealLayout(
    { ...parts, segments: [parts.compressed], segmentBytes: parts.segmentBytes ?? parts.length },
    key,
  )
  hmac(secret, out.subarray(0, total - TAG_BYTES)).copy(out, total - TAG_BYTES)
  return out
}

interface SealParts {
  version: number
  identity: SnapshotIdentity
  /** The payload's segments, each compressed on its own. */
  segments: readonly Uint8Array[]
  segmentBytes: number
  length: number
}

/** A sealed snapshot but for its final tag (the last `TAG_BYTES`). */
function sealLayout(parts: SealParts, key: SnapshotKey): { out: Buffer; secret: Buffer; total: number } {
  const secret = keyBytes(key, 'sealSnapshot')
  const build = idBytes(parts.identity, 'build', 'sealSnapshot')
  const session = idBytes(parts.identity, 'session', 'sealSnapshot')
  const bodyStart = FIXED_HEADER_BYTES + 2 + build.length + 2 + session.length + 8 + 8 + 4 * parts.segments.length
  const total = bodyStart + parts.segments.reduce((sum, segment) => sum + segment.byteLength, 0) + TAG_BYTES
  const out = Buffer.allocUnsafe(total)
  MAGIC.copy(out, 0)
  out.writeUInt16BE(parts.version, 4)
  out.writeBigUInt64BE(BigInt(total), 6)
  hmac(secret, out.subarray(0, 14)).copy(out, 14, 0, HEADER_TAG_BYTES)
  let at = FIXED_HEADER_BYTES
  at = out.writeUInt16BE(build.length, at)
  at += build.copy(out, at)
  at = out.writeUInt16BE(session.length, at)
  at += session.copy(out, at)
  at = out.writeBigUInt64BE(BigInt(parts.length), at)
  at = out.writeBigUInt64BE(BigInt(parts.segmentBytes), at)
  for (const segment of parts.segments) at = out.writeUInt32BE(segment.byteLength, at)
  for (const segment of parts.segments) {
    out.set(segment, at)
    at += segment.byteLength
  }
  return { out, secret, total }
}
