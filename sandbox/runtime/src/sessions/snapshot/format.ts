import { createHmac } from 'node:crypto'
import { SandboxUsageError } from '../../errors.js'
import { WRITTEN } from './codec.js'

// The sealed snapshot's layout and bounds, its authentication, and the key and identity it is bound to.

/**
 * The layout version `sealSnapshot` writes on this Node: 3 (segments compressed with zstd) where Node has zstd
 * (22.15 and later), else 2 (brotli). `openSnapshot` reads 2 everywhere, 3 where Node has zstd.
 */
export const SNAPSHOT_FORMAT_VERSION = WRITTEN.version

/** What a snapshot is bound to: the build that made it and the session it belongs to. */
export interface SnapshotIdentity {
  readonly build: string
  readonly session: string
}

/** The host's secret that authenticates snapshots (the HMAC-SHA256 key): at least 16 bytes. */
export type SnapshotKey = string | Uint8Array

/** The least key length `sealSnapshot` and `openSnapshot` accept, in bytes. */
const MIN_KEY_BYTES = 16
const MAX_ID_BYTES = 0xffff
export const MAGIC = Buffer.from('PTCS', 'latin1')
export const TAG_BYTES = 32
export const HEADER_TAG_BYTES = 16
/*
 * Layout (integers big-endian):
 *    0   4  magic "PTCS"
 *    4   2  format version
 *    6   8  total length of the snapshot, so a cut-off one is told from an altered one
 *   14  16  header tag: HMAC-SHA256(key, bytes 0..14) cut to 16 bytes, so version and length are trusted
 *   30   2  build id length, then the build id (UTF-8)
 *    .   2  session length, then the session (UTF-8)
 *    .   8  payload length before compression
 *    .   8  segment length before compression (the last segment holds the rest; 0 for an empty payload)
 *    .   4  per segment, its compressed length
 *    .      the segments, each compressed on its own (version 2: brotli; 3: zstd)
 *  end  32  tag: HMAC-SHA256(key, every byte before it)
 */
export const FIXED_HEADER_BYTES = 30
export const MIN_SNAPSHOT_BYTES = FIXED_HEADER_BYTES + 2 + 2 + 8 + 8 + TAG_BYTES

/**
 * The payload is cut into at most this many segments, compressed and decompressed at once on libuv's thread pool
 * (on 2 cores, in about two thirds of the time). At least `MIN_SEGMENT_BYTES` each; a reader takes at most
 * `MAX_SEGMENTS`.
 */
export const SEGMENTS = 4
export const MIN_SEGMENT_BYTES = 2 * 1024 * 1024
export const MAX_SEGMENTS = 64

/** The HMAC-SHA256 of `data` under `key`. */
export function hmac(key: Buffer, data: Buffer): Buffer {
  return createHmac('sha256', key).update(data).digest()
}

/** The HMAC-SHA256 of `data` in 4 MiB slices, the event loop taking a turn between them. */
export async function hmacSliced(key: Buffer, data: Buffer): Promise<Buffer> {
  const mac = createHmac('sha256', key)
  for (let at = 0; at < data.length; at += HMAC_SLICE_BYTES) {
    if (at > 0) await new Promise((resolve) => setImmediate(resolve))
    mac.update(data.subarray(at, at + HMAC_SLICE_BYTES))
  }
  return mac.digest()
}

const HMAC_SLICE_BYTES = 4 * 1024 * 1024

/** `key` as bytes; throws `SandboxUsageError` (naming `caller`) for one that is not a key, or too short. */
export function keyBytes(key: SnapshotKey, caller: string): Buffer {
  let bytes: Buffer
  if (typeof key === 'string') bytes = Buffer.from(key, 'utf8')
  else if (key instanceof Uint8Array) bytes = Buffer.from(key.buffer, key.byteOffset, key.byteLength)
  else throw new SandboxUsageError(`${caller}: the key must be a string or a Uint8Array`)
  if (bytes.length < MIN_KEY_BYTES) {
    throw new SandboxUsageError(
      `${caller}: the key is ${bytes.length} bytes; ` +
        `a snapshot key needs at least ${MIN_KEY_BYTES} (use 32 random bytes)`,
    )
  }
  return bytes
}

/** `identity`'s `name` as UTF-8; throws `SandboxUsageError` (naming `caller`) for an empty or too long one. */
export function idBytes(identity: SnapshotIdentity, name: 'build' | 'session', caller: string): Buffer {
  const value: unknown = typeof identity === 'object' && identity !== null ? identity[name] : undefined
  if (typeof value !== 'string' || value === '')
    throw new SandboxUsageError(`${caller}: identity.${name} must be a non-empty string`)
  const bytes = Buffer.from(value, 'utf8')
  if (bytes.length > MAX_ID_BYTES)
    throw new SandboxUsageError(`${caller}: identity.${name} is ${bytes.length} bytes; at most ${MAX_ID_BYTES}`)
  return bytes
}
