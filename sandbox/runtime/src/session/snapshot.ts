import { constants as bufferConstants } from 'node:buffer'
import { createHmac, timingSafeEqual } from 'node:crypto'
import { promisify } from 'node:util'
import {
  brotliCompress,
  brotliCompressSync,
  brotliDecompress,
  brotliDecompressSync,
  constants as zlib,
  type BrotliOptions,
} from 'node:zlib'
import { SandboxUsageError } from '../errors.js'
import { SnapshotError } from './errors.js'

/** The layout version `sealSnapshot` writes and the only one `openSnapshot` reads (2: the payload in segments). */
export const SNAPSHOT_FORMAT_VERSION = 2

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
const MAGIC = Buffer.from('PTCS', 'latin1')
const TAG_BYTES = 32
const HEADER_TAG_BYTES = 16
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
 *    .      the segments, each brotli on its own
 *  end  32  tag: HMAC-SHA256(key, every byte before it)
 */
const FIXED_HEADER_BYTES = 30
const MIN_SNAPSHOT_BYTES = FIXED_HEADER_BYTES + 2 + 2 + 8 + 8 + TAG_BYTES

/**
 * The payload is cut into at most this many segments, compressed (and decompressed) at once on libuv's
 * thread pool: on 2 cores, 30 MiB of session heap sealed in 41-43 ms instead of 58-73 and opened in 27-40
 * instead of 63-85, for the same size. At least `MIN_SEGMENT_BYTES` each; a reader takes up to `MAX_SEGMENTS`.
 */
const SEGMENTS = 4
const MIN_SEGMENT_BYTES = 2 * 1024 * 1024
const MAX_SEGMENTS = 64

/**
 * Brotli quality 1. Of deflate level 1 and brotli 0–2, quality 0 was the fastest on 10 MiB of varied JSON
 * (35% of its size), and no native codec with prebuilt binaries (lz4-napi, zstd) sealed much faster on a
 * 2-core VM to be worth one; lz4 opens faster but stores a quarter more. On a QuickJS heap in byte planes
 * (what QuickJS sessions seal), quality 1 stores 12-14% of it where quality 0 stores 15-17%, for 7-20%
 * more time (6 to 58 MiB of heap holding JSON-like records).
 */
const BROTLI_QUALITY = 1

/** Seals `payload` for `identity`: compressed, bound to the build and session, authenticated with `key`. */
export function sealSnapshot(payload: Uint8Array, identity: SnapshotIdentity, key: SnapshotKey): Uint8Array {
  if (!(payload instanceof Uint8Array)) throw new SandboxUsageError('sealSnapshot: the payload must be a Uint8Array')
  const segmentBytes = segmentBytesFor(payload.byteLength)
  const segments = segmentsOf(payload, segmentBytes).map((segment) =>
    brotliCompressSync(segment, brotliOptions(segment)),
  )
  const { out, secret, total } = sealLayout(
    { version: SNAPSHOT_FORMAT_VERSION, identity, segments, segmentBytes, length: payload.byteLength },
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
  // Large chunks: the thread pool is asked once per chunk (at the default 16 KiB, thousands of times).
  const segments = await Promise.all(
    segmentsOf(payload, segmentBytes).map((segment) =>
      brotliCompressAsync(segment, { ...brotliOptions(segment), chunkSize: chunkFor(segment.byteLength / 4) }),
    ),
  )
  const { out, secret, total } = sealLayout(
    { version: SNAPSHOT_FORMAT_VERSION, identity, segments, segmentBytes, length: payload.byteLength },
    key,
  )
  ;(await hmacSliced(secret, out.subarray(0, total - TAG_BYTES))).copy(out, total - TAG_BYTES)
  return out
}

function brotliOptions(payload: Uint8Array): BrotliOptions {
  return {
    params: {
      [zlib.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY,
      [zlib.BROTLI_PARAM_MODE]: zlib.BROTLI_MODE_GENERIC,
      [zlib.BROTLI_PARAM_SIZE_HINT]: payload.byteLength,
    },
  }
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

/**
 * Opens a snapshot sealed for `identity` with `key` and returns its payload. Throws `SnapshotError`, checking in
 * this order: the magic (`not-a-snapshot`); the header, authenticated by its own tag (`truncated` when too
 * short, `tampered`, `unsupported-version`); the declared length (`truncated`); the tag over everything
 * (`tampered`: an altered byte or another key); the build (`foreign-build`) and session (`foreign-session`);
 * the payload, decompressed to at most its declared length (`tampered` unless exactly that).
 */
export function openSnapshot(bytes: Uint8Array, identity: SnapshotIdentity, key: SnapshotKey): Uint8Array {
  const head = openHead(bytes, identity, key)
  if (!timingSafeEqual(hmac(head.secret, head.buf.subarray(0, head.tagAt)), head.buf.subarray(head.tagAt)))
    throw tampered()
  const { segments, segmentBytes, length } = openBody(head, identity)
  const payload = Buffer.allocUnsafe(length)
  segments.forEach((compressed, i) => {
    const bytes = Math.min(segmentBytes, length - i * segmentBytes)
    let out: unknown
    try {
      out = brotliDecompressSync(compressed, { maxOutputLength: bytes + 1 })
    } catch (error) {
      out = error
    }
    placeSegment(payload, i * segmentBytes, bytes, out)
  })
  return payload
}

/** `openSnapshot` without holding the event loop (see `sealSnapshotAsync`). */
export async function openSnapshotAsync(
  bytes: Uint8Array,
  identity: SnapshotIdentity,
  key: SnapshotKey,
): Promise<Uint8Array> {
  const head = openHead(bytes, identity, key)
  if (!timingSafeEqual(await hmacSliced(head.secret, head.buf.subarray(0, head.tagAt)), head.buf.subarray(head.tagAt)))
    throw tampered()
  const { segments, segmentBytes, length } = openBody(head, identity)
  const payload = Buffer.allocUnsafe(length)
  const results = await Promise.allSettled(
    segments.map(async (compressed, i) => {
      const bytes = Math.min(segmentBytes, length - i * segmentBytes)
      const out = await brotliDecompressAsync(compressed, {
        maxOutputLength: bytes + 1,
        chunkSize: chunkFor(bytes + 1),
      }).catch((error: unknown) => error)
      placeSegment(payload, i * segmentBytes, bytes, out)
    }),
  )
  // Every segment settled (none is still writing into the payload) before the first refusal is thrown.
  for (const result of results) if (result.status === 'rejected') throw result.reason
  return payload
}

/**
 * Puts a decompressed segment (`out`, decompressed to at most `bytes` + 1: one byte over tells that it is
 * longer than declared) at `at` in `payload`, or throws `tampered`: it did not decompress (`out` is the
 * error), or not to exactly `bytes`.
 */
function placeSegment(payload: Buffer, at: number, bytes: number, out: unknown): void {
  if (!(out instanceof Uint8Array))
    throw tampered(`its payload does not decompress within its declared ${payload.length} bytes`, out)
  if (out.length !== bytes)
    throw tampered(
      `its payload decompresses to ${out.length === bytes + 1 ? 'more than' : payload.length - bytes + out.length} bytes, not the declared ${payload.length}`,
    )
  payload.set(out, at)
}

interface OpenHead {
  buf: Buffer
  secret: Buffer
  /** Where the final tag starts (the declared total less the tag). */
  tagAt: number
}

/** The checks before the final tag: magic, header tag, version, declared length. */
function openHead(bytes: Uint8Array, identity: SnapshotIdentity, key: SnapshotKey): OpenHead {
  if (!(bytes instanceof Uint8Array)) throw new SandboxUsageError('openSnapshot: the snapshot must be a Uint8Array')
  const secret = keyBytes(key, 'openSnapshot')
  // The identity is compared once the bytes are known authentic (`openBody`); read now, a bad one fails first.
  idBytes(identity, 'build', 'openSnapshot')
  idBytes(identity, 'session', 'openSnapshot')
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const magicSeen = buf.subarray(0, MAGIC.length)
  if (buf.length === 0 || !magicSeen.equals(MAGIC.subarray(0, magicSeen.length))) {
    throw new SnapshotError(
      'not-a-snapshot',
      `these ${buf.length} bytes are not a session snapshot (no "PTCS" magic): pass the bytes sealSnapshot returned`,
    )
  }
  if (buf.length < FIXED_HEADER_BYTES) throw truncated(buf.length, undefined)
  if (
    !timingSafeEqual(
      hmac(secret, buf.subarray(0, 14)).subarray(0, HEADER_TAG_BYTES),
      buf.subarray(14, FIXED_HEADER_BYTES),
    )
  )
    throw tampered()
  const version = buf.readUInt16BE(4)
  if (version !== SNAPSHOT_FORMAT_VERSION) {
    throw new SnapshotError(
      'unsupported-version',
      `snapshot format version ${version} is not supported; this build reads version ${SNAPSHOT_FORMAT_VERSION}: resume it with the build that sealed it`,
    )
  }
  const total = Number(buf.readBigUInt64BE(6))
  if (buf.length < total) throw truncated(buf.length, total)
  if (buf.length > total) throw tampered(`it has ${buf.length - total} bytes after its declared end`)
  if (total < MIN_SNAPSHOT_BYTES) throw tampered(`it declares ${total} bytes, fewer than any snapshot has`)
  return { buf, secret, tagAt: total - TAG_BYTES }
}

/** The fields of an authentic snapshot, checked against `identity`: its compressed segments and declared lengths. */
function openBody(
  { buf, tagAt }: OpenHead,
  identity: SnapshotIdentity,
): { segments: Buffer[]; segmentBytes: number; length: number } {
  const expectedBuild = idBytes(identity, 'build', 'openSnapshot')
  const expectedSession = idBytes(identity, 'session', 'openSnapshot')
  // Authentic from here on: a bad field below was written by a holder of the key, not by chance.
  let at = FIXED_HEADER_BYTES
  const build = field(buf, at, tagAt, 'build id')
  at += 2 + build.length
  const session = field(buf, at, tagAt, 'session')
  at += 2 + session.length
  if (at + 16 > tagAt) throw tampered('its header runs past its payload')
  const length = Number(buf.readBigUInt64BE(at))
  const segmentBytes = Number(buf.readBigUInt64BE(at + 8))
  at += 16
  if (!build.equals(expectedBuild)) {
    throw new SnapshotError(
      'foreign-build',
      `snapshot was made by build ${JSON.stringify(build.toString('utf8'))}; this is build ${JSON.stringify(identity.build)}: resume it on the same build`,
    )
  }
  if (!session.equals(expectedSession)) {
    throw new SnapshotError(
      'foreign-session',
      `snapshot belongs to session ${JSON.stringify(session.toString('utf8'))}, not ${JSON.stringify(identity.session)}: open it for the session that sealed it`,
    )
  }
  checkLength(length)
  if (length > 0 && segmentBytes === 0) throw tampered('it declares empty segments')
  const count = length === 0 ? 0 : Math.ceil(length / segmentBytes)
  if (count > MAX_SEGMENTS) throw tampered(`it declares ${count} segments, more than ${MAX_SEGMENTS}`)
  if (at + 4 * count > tagAt) throw tampered('its segment table runs past its payload')
  const segments: Buffer[] = []
  let from = at + 4 * count
  for (let i = 0; i < count; i++) {
    const size = buf.readUInt32BE(at + 4 * i)
    segments.push(buf.subarray(from, from + size))
    from += size
  }
  if (from !== tagAt)
    throw tampered(`its segments hold ${from - at - 4 * count} bytes where ${tagAt - at - 4 * count} were written`)
  return { segments, segmentBytes, length }
}

function checkLength(length: number): void {
  if (length > bufferConstants.MAX_LENGTH)
    throw tampered(`it declares a ${length}-byte payload, more than a Buffer can hold`)
}

function field(buf: Buffer, at: number, end: number, what: string): Buffer {
  if (at + 2 > end) throw tampered(`its ${what} runs past its payload`)
  const size = buf.readUInt16BE(at)
  if (at + 2 + size > end) throw tampered(`its ${what} runs past its payload`)
  return buf.subarray(at + 2, at + 2 + size)
}

function truncated(size: number, total: number | undefined): SnapshotError {
  const declared = total === undefined ? '' : ` of the ${total} it declares`
  return new SnapshotError(
    'truncated',
    `snapshot is cut off: only ${size} bytes${declared} arrived (an interrupted write or copy?): read it again whole, or suspend the session anew`,
  )
}

function tampered(detail?: string, cause?: unknown): SnapshotError {
  const message =
    detail === undefined
      ? 'snapshot failed authentication: it was altered, or sealed with another key: open it with the key that sealed it, or suspend the session anew'
      : `snapshot is authentic but malformed: ${detail}: it cannot be resumed; suspend the session anew`
  return new SnapshotError('tampered', message, cause === undefined ? undefined : { cause })
}

function hmac(key: Buffer, data: Buffer): Buffer {
  return createHmac('sha256', key).update(data).digest()
}

/** The HMAC-SHA256 of `data` in 4 MiB slices, the event loop taking a turn between them. */
async function hmacSliced(key: Buffer, data: Buffer): Promise<Buffer> {
  const mac = createHmac('sha256', key)
  for (let at = 0; at < data.length; at += HMAC_SLICE_BYTES) {
    if (at > 0) await new Promise((resolve) => setImmediate(resolve))
    mac.update(data.subarray(at, at + HMAC_SLICE_BYTES))
  }
  return mac.digest()
}

const HMAC_SLICE_BYTES = 4 * 1024 * 1024

/** The output chunk of an asynchronous brotli pass about `bytes` long: between 64 KiB and 8 MiB. */
function chunkFor(bytes: number): number {
  return Math.max(64 * 1024, Math.min(8 * 1024 * 1024, Math.ceil(bytes)))
}
const brotliCompressAsync = promisify(brotliCompress)
const brotliDecompressAsync = promisify(brotliDecompress)

function keyBytes(key: SnapshotKey, caller: string): Buffer {
  let bytes: Buffer
  if (typeof key === 'string') bytes = Buffer.from(key, 'utf8')
  else if (key instanceof Uint8Array) bytes = Buffer.from(key.buffer, key.byteOffset, key.byteLength)
  else throw new SandboxUsageError(`${caller}: the key must be a string or a Uint8Array`)
  if (bytes.length < MIN_KEY_BYTES) {
    throw new SandboxUsageError(
      `${caller}: the key is ${bytes.length} bytes; a snapshot key needs at least ${MIN_KEY_BYTES} (use 32 random bytes)`,
    )
  }
  return bytes
}

function idBytes(identity: SnapshotIdentity, name: 'build' | 'session', caller: string): Buffer {
  const value: unknown = typeof identity === 'object' && identity !== null ? identity[name] : undefined
  if (typeof value !== 'string' || value === '')
    throw new SandboxUsageError(`${caller}: identity.${name} must be a non-empty string`)
  const bytes = Buffer.from(value, 'utf8')
  if (bytes.length > MAX_ID_BYTES)
    throw new SandboxUsageError(`${caller}: identity.${name} is ${bytes.length} bytes; at most ${MAX_ID_BYTES}`)
  return bytes
}
