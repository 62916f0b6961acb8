import { constants as bufferConstants } from 'node:buffer'
import { timingSafeEqual } from 'node:crypto'
import { SandboxUsageError } from '../../errors.js'
import { SnapshotError } from '../store/errors.js'
import { codecOf, unreadableVersion, type Codec } from './codec.js'
import {
  FIXED_HEADER_BYTES,
  HEADER_TAG_BYTES,
  MAGIC,
  MAX_SEGMENTS,
  MIN_SNAPSHOT_BYTES,
  TAG_BYTES,
  hmac,
  hmacSliced,
  idBytes,
  keyBytes,
  type SnapshotIdentity,
  type SnapshotKey,
} from './format.js'

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
      out = head.codec.decompressSync(compressed, bytes + 1)
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
      const out = await head.codec.decompress(compressed, bytes + 1).catch((error: unknown) => error)
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
      `its payload decompresses to ${out.length === bytes + 1 ? 'more than' : payload.length - bytes + out.length} ` +
        `bytes, not the declared ${payload.length}`,
    )
  payload.set(out, at)
}

interface OpenHead {
  buf: Buffer
  secret: Buffer
  /** Where the final tag starts (the declared total less the tag). */
  tagAt: number
  /** How its segments are compressed (by its format version). */
  codec: Codec
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
  const codec = codecOf(version)
  if (codec === undefined) throw new SnapshotError('unsupported-version', unreadableVersion(version))
  const total = Number(buf.readBigUInt64BE(6))
  if (buf.length < total) throw truncated(buf.length, total)
  if (buf.length > total) throw tampered(`it has ${buf.length - total} bytes after its declared end`)
  if (total < MIN_SNAPSHOT_BYTES) throw tampered(`it declares ${total} bytes, fewer than any snapshot has`)
  return { buf, secret, tagAt: total - TAG_BYTES, codec }
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
      `snapshot was made by build ${JSON.stringify(build.toString('utf8'))}; ` +
        `this is build ${JSON.stringify(identity.build)}: resume it on the same build`,
    )
  }
  if (!session.equals(expectedSession)) {
    throw new SnapshotError(
      'foreign-session',
      `snapshot belongs to session ${JSON.stringify(session.toString('utf8'))}, ` +
        `not ${JSON.stringify(identity.session)}: open it for the session that sealed it`,
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
    `snapshot is cut off: only ${size} bytes${declared} arrived (an interrupted write or copy?): ` +
      'read it again whole, or suspend the session anew',
  )
}

function tampered(detail?: string, cause?: unknown): SnapshotError {
  const message =
    detail === undefined
      ? 'snapshot failed authentication: it was altered, or sealed with another key: ' +
        'open it with the key that sealed it, or suspend the session anew'
      : `snapshot is authentic but malformed: ${detail}: it cannot be resumed; suspend the session anew`
  return new SnapshotError('tampered', message, cause === undefined ? undefined : { cause })
}
