import { createHmac, randomBytes } from 'node:crypto'
import { brotliCompressSync, constants as zlib } from 'node:zlib'
import { describe, expect, test } from 'vitest'
import { SandboxUsageError } from '../../errors.js'
import { SnapshotError, type SnapshotErrorCode } from '../store/errors.js'
import { _codecs } from './codec.js'
import { SNAPSHOT_FORMAT_VERSION, type SnapshotIdentity } from './format.js'
import { openSnapshot, openSnapshotAsync } from './open.js'
import { _sealRaw, sealSnapshot, sealSnapshotAsync } from './seal.js'

/** The format of segments compressed with brotli, which the forged snapshots below hold. */
const BROTLI = 2

const key = randomBytes(32)
const id: SnapshotIdentity = { build: 'build-1', session: 'session-a' }

/** `bytes` of varied JSON records, like a heap's strings and objects. */
function records(bytes: number): Uint8Array {
  const parts: string[] = []
  let size = 0
  for (let i = 0; size < bytes; i++) {
    const text = JSON.stringify({
      id: i,
      name: `user ${i % 977}`,
      tags: ['a', 'b', String(i % 13)],
      amount: ((i * 37) % 10_000) / 100,
      note: randomBytes(6).toString('hex'),
    })
    parts.push(text)
    size += text.length + 1
  }
  return Buffer.from(parts.join('\n').slice(0, bytes))
}

/** A copy of `bytes` with the byte at `at` xored with `mask`. */
function flip(bytes: Uint8Array, at: number, mask: number): Buffer {
  const copy = Buffer.from(bytes)
  copy[at] = (copy[at] as number) ^ mask
  return copy
}

function refusal(run: () => unknown): SnapshotError {
  try {
    run()
  } catch (error) {
    if (error instanceof SnapshotError) return error
    throw error
  }
  throw new Error('expected a SnapshotError, and nothing was thrown')
}

function expectCode(
  bytes: Uint8Array,
  code: SnapshotErrorCode,
  identity: SnapshotIdentity = id,
  withKey: Uint8Array | string = key,
): SnapshotError {
  const error = refusal(() => openSnapshot(bytes, identity, withKey))
  expect(error.code, error.message).toBe(code)
  expect(error.name).toBe('SnapshotError')
  return error
}

/** The offsets of a sealed snapshot's regions, read from the layout in snapshot.ts. */
function regions(
  sealed: Uint8Array,
): Record<
  | 'magic'
  | 'version'
  | 'length'
  | 'headerTag'
  | 'build'
  | 'session'
  | 'payloadLength'
  | 'segmentBytes'
  | 'segmentTable'
  | 'payload'
  | 'tag',
  number
> {
  const buf = Buffer.from(sealed)
  const build = 30
  const session = build + 2 + buf.readUInt16BE(build)
  const payloadLength = session + 2 + buf.readUInt16BE(session)
  const length = Number(buf.readBigUInt64BE(payloadLength))
  const segmentBytes = Number(buf.readBigUInt64BE(payloadLength + 8))
  const count = length === 0 ? 0 : Math.ceil(length / segmentBytes)
  const segmentTable = payloadLength + 16
  return {
    magic: 0,
    version: 4,
    length: 6,
    headerTag: 14,
    build: build + 2,
    session: session + 2,
    payloadLength,
    segmentBytes: payloadLength + 8,
    segmentTable,
    payload: segmentTable + 4 * count,
    tag: buf.length - 32,
  }
}

/** How many segments a sealed snapshot's payload was cut into. */
function segmentCount(sealed: Uint8Array): number {
  const at = regions(sealed)
  return (at.payload - at.segmentTable) / 4
}

describe('seal and open', () => {
  test.each([
    ['empty', new Uint8Array(0)],
    ['small', Buffer.from('{"x":1}')],
    ['10 MiB of records', records(10 * 1024 * 1024)],
    ['1 MiB of random bytes', randomBytes(1024 * 1024)],
  ])('a %s payload comes back byte for byte', (_name, payload) => {
    const sealed = sealSnapshot(payload, id, key)
    expect(Buffer.from(openSnapshot(sealed, id, key)).equals(Buffer.from(payload))).toBe(true)
  })

  test('the async variants (off the event loop) read and write the same format as the synchronous ones', async () => {
    const payload = records(9 * 1024 * 1024) // more than two HMAC slices
    const sealed = await sealSnapshotAsync(payload, id, key)
    expect(Buffer.from(openSnapshot(sealed, id, key)).equals(Buffer.from(payload))).toBe(true)
    expect(
      Buffer.from(await openSnapshotAsync(sealSnapshot(payload, id, key), id, key)).equals(Buffer.from(payload)),
    ).toBe(true)
    const flipped = Buffer.from(sealed)
    flipped[flipped.length - 40] = (flipped[flipped.length - 40] as number) ^ 1
    await expect(openSnapshotAsync(flipped, id, key)).rejects.toMatchObject({ code: 'tampered' })
    await expect(openSnapshotAsync(sealed.subarray(0, 100), id, key)).rejects.toMatchObject({ code: 'truncated' })
    await expect(openSnapshotAsync(sealed, { ...id, session: 'another' }, key)).rejects.toMatchObject({
      code: 'foreign-session',
    })
  })

  test('a large payload is sealed in segments, each compressed on its own (at once off the event loop); any cut of it opens', async () => {
    const payload = records(9 * 1024 * 1024)
    const sealed = sealSnapshot(payload, id, key)
    expect(segmentCount(sealed)).toBe(4)
    expect(segmentCount(await sealSnapshotAsync(payload, id, key))).toBe(4)
    expect(segmentCount(sealSnapshot(records(1024 * 1024), id, key))).toBe(1)
    expect(segmentCount(sealSnapshot(new Uint8Array(0), id, key))).toBe(0)
    expect(Buffer.from(await openSnapshotAsync(sealed, id, key)).equals(Buffer.from(payload))).toBe(true)
    // A reader takes any segment length, the last segment holding the rest.
    const compressed = brotliCompressSync(Buffer.from('abcdefgh'))
    const one = _sealRaw({ version: BROTLI, identity: id, compressed, length: 8, segmentBytes: 64 }, key)
    expect(Buffer.from(openSnapshot(one, id, key)).toString()).toBe('abcdefgh')
  })

  test('an authentic snapshot whose segment table does not fit its payload: tampered', async () => {
    const compressed = brotliCompressSync(Buffer.alloc(4096, 7))
    const cases: [number, number, RegExp][] = [
      [4096, 1024, /segment/], // four segments declared, one written
      [4096, 0, /empty segments/],
      [100, 1, /100 segments, more than 64/],
    ]
    for (const [length, segmentBytes, message] of cases) {
      const forged = _sealRaw({ version: BROTLI, identity: id, compressed, length, segmentBytes }, key)
      expect(expectCode(forged, 'tampered').message).toMatch(message)
      await expect(openSnapshotAsync(forged, id, key)).rejects.toMatchObject({ code: 'tampered' })
    }
    // A segment that decompresses to less (or more) than its share of the declared length.
    const short = _sealRaw({ version: BROTLI, identity: id, compressed, length: 4097 }, key)
    expect(expectCode(short, 'tampered').message).toMatch(/4096 bytes, not the declared 4097/)
    await expect(openSnapshotAsync(short, id, key)).rejects.toMatchObject({ code: 'tampered' })
  })

  test('records are stored compressed', () => {
    const payload = records(1024 * 1024)
    expect(sealSnapshot(payload, id, key).length).toBeLessThan(payload.length / 2)
  })

  test('a string key works like its UTF-8 bytes', () => {
    const text = 'a host secret of enough length'
    expect(Buffer.from(openSnapshot(sealSnapshot(Buffer.from('p'), id, text), id, Buffer.from(text))).toString()).toBe(
      'p',
    )
  })

  test('the payload is read from a view into a larger buffer, and a snapshot can be opened from one', () => {
    const backing = Buffer.from('xxxxhelloyyyy')
    const sealed = sealSnapshot(backing.subarray(4, 9), id, key)
    const framed = new Uint8Array(sealed.length + 10)
    framed.set(sealed, 5)
    expect(Buffer.from(openSnapshot(framed.subarray(5, 5 + sealed.length), id, key)).toString()).toBe('hello')
  })
})

describe('misuse is a SandboxUsageError', () => {
  test('a key shorter than 16 bytes is refused, with its length', () => {
    expect(() => sealSnapshot(new Uint8Array(1), id, 'short')).toThrow(SandboxUsageError)
    expect(() => sealSnapshot(new Uint8Array(1), id, randomBytes(15))).toThrow(
      /15 bytes; a snapshot key needs at least 16/,
    )
    expect(() => openSnapshot(new Uint8Array(1), id, 'short')).toThrow(/at least 16/)
  })

  test('an empty build or session is refused', () => {
    expect(() => sealSnapshot(new Uint8Array(1), { build: '', session: 's' }, key)).toThrow(
      /identity.build must be a non-empty string/,
    )
    expect(() => openSnapshot(new Uint8Array(1), { build: 'b', session: '' }, key)).toThrow(/identity.session/)
  })
})

describe('every refusal has its code', () => {
  const payload = records(64 * 1024)
  const sealed = sealSnapshot(payload, id, key)

  test('bytes that are not a snapshot: not-a-snapshot', () => {
    expectCode(new Uint8Array(0), 'not-a-snapshot')
    expectCode(Buffer.from('{"heap":[1,2,3]}'), 'not-a-snapshot')
    expectCode(randomBytes(4096), 'not-a-snapshot')
    const badMagic = flip(sealed, 0, 0x01)
    expect(expectCode(badMagic, 'not-a-snapshot').message).toMatch(/PTCS/)
  })

  test('a snapshot cut off anywhere: truncated', () => {
    for (const size of [1, 3, 4, 10, 29, 30, 31, 60, sealed.length >> 1, sealed.length - 33, sealed.length - 1]) {
      const error = expectCode(sealed.subarray(0, size), 'truncated')
      expect(error.message).toContain(`only ${size} bytes`)
    }
  })

  test('a flipped byte in any region: tampered', () => {
    const at = regions(sealed)
    for (const [region, offset] of Object.entries(at)) {
      if (region === 'magic') continue // bad magic is not-a-snapshot, above
      for (const delta of [0, 1]) {
        const flipped = flip(sealed, offset + delta, 0x40)
        const error = refusal(() => openSnapshot(flipped, id, key))
        expect(error.code, `${region}+${delta}: ${error.message}`).toBe('tampered')
      }
    }
    expectCode(flip(sealed, sealed.length - 1, 0x01), 'tampered')
  })

  test('bytes after the end: tampered', () => {
    expectCode(Buffer.concat([sealed, Buffer.from([0])]), 'tampered')
  })

  test('the wrong key: tampered, and the message says so', () => {
    expect(expectCode(sealed, 'tampered', id, randomBytes(32)).message).toMatch(/another key/)
  })

  test('a valid snapshot of another build: foreign-build, naming both', () => {
    const other = sealSnapshot(payload, { ...id, build: 'build-0' }, key)
    const error = expectCode(other, 'foreign-build')
    expect(error.message).toBe(
      'snapshot was made by build "build-0"; this is build "build-1": resume it on the same build',
    )
  })

  test('a valid snapshot of another session: foreign-session, naming both', () => {
    const error = expectCode(sealSnapshot(payload, { ...id, session: 'session-b' }, key), 'foreign-session')
    expect(error.message).toContain('"session-b"')
    expect(error.message).toContain('"session-a"')
  })

  test('another build is told before another session', () => {
    expectCode(sealSnapshot(payload, { build: 'x', session: 'y' }, key), 'foreign-build')
  })

  test('an authentic snapshot of another format version: unsupported-version', () => {
    const compressed = brotliCompressSync(payload)
    const next = _sealRaw({ version: 99, identity: id, compressed, length: payload.length }, key)
    expect(expectCode(next, 'unsupported-version').message).toContain('version 99 is not supported')
    expect(
      Buffer.from(
        openSnapshot(_sealRaw({ version: BROTLI, identity: id, compressed, length: payload.length }, key), id, key),
      ).equals(Buffer.from(payload)),
    ).toBe(true)
  })

  test('a decompression bomb stops at the declared length: tampered', () => {
    const bomb = brotliCompressSync(Buffer.alloc(64 * 1024 * 1024), { params: { [zlib.BROTLI_PARAM_QUALITY]: 1 } }) // 64 MiB of zeros in a few bytes
    expect(bomb.length).toBeLessThan(64 * 1024)
    const sealedBomb = _sealRaw({ version: BROTLI, identity: id, compressed: bomb, length: 1024 }, key)
    expect(expectCode(sealedBomb, 'tampered').message).toMatch(/declared 1024 bytes/)
  })

  test('a payload shorter than declared, or not compressed at all: tampered', () => {
    const short = _sealRaw(
      { version: BROTLI, identity: id, compressed: brotliCompressSync(Buffer.from('abc')), length: 4 },
      key,
    )
    expect(expectCode(short, 'tampered').message).toMatch(/3 bytes, not the declared 4/)
    expectCode(_sealRaw({ version: BROTLI, identity: id, compressed: randomBytes(100), length: 100 }, key), 'tampered')
  })

  test('an authentic header whose length field was forged is still checked by the tag', () => {
    const forged = Buffer.from(sealed)
    forged.writeBigUInt64BE(BigInt(sealed.length + 100), 6)
    const headerTag = createHmac('sha256', key).update(forged.subarray(0, 14)).digest().subarray(0, 16)
    headerTag.copy(forged, 14)
    expectCode(forged, 'truncated') // authentic header: the length is believed, and 100 bytes are missing
    expectCode(Buffer.concat([forged, Buffer.alloc(100)]), 'tampered')
  })

  test('SnapshotError is recognised across module copies by its brand', () => {
    const error = refusal(() => openSnapshot(new Uint8Array(0), id, key))
    expect(error).toBeInstanceOf(Error)
    expect(Object.create(error) instanceof SnapshotError).toBe(true)
    expect({} instanceof SnapshotError).toBe(false)
  })
})

describe('the codec of the segments', () => {
  const payload = records(3 * 1024 * 1024)
  const hasZstd = _codecs.zstd !== undefined

  test('this Node writes zstd (format 3) where it has it, else brotli (format 2), and opens what it writes', async () => {
    const sealed = sealSnapshot(payload, id, key)
    const version = Buffer.from(sealed).readUInt16BE(4)
    expect(version).toBe(hasZstd ? 3 : 2)
    expect(SNAPSHOT_FORMAT_VERSION).toBe(version)
    expect(Buffer.from(await sealSnapshotAsync(payload, id, key)).readUInt16BE(4)).toBe(version)
    expect(Buffer.from(openSnapshot(sealed, id, key)).equals(Buffer.from(payload))).toBe(true)
    expect(Buffer.from(await openSnapshotAsync(sealed, id, key)).equals(Buffer.from(payload))).toBe(true)
  })

  test('a brotli snapshot (format 2) opens on every Node', async () => {
    const compressed = _codecs.brotli.compressSync(payload)
    const sealed = _sealRaw({ version: BROTLI, identity: id, compressed, length: payload.length }, key)
    expect(Buffer.from(openSnapshot(sealed, id, key)).equals(Buffer.from(payload))).toBe(true)
    expect(Buffer.from(await openSnapshotAsync(sealed, id, key)).equals(Buffer.from(payload))).toBe(true)
  })

  test.runIf(!hasZstd)('on a Node without zstd, a zstd snapshot is refused with the Node that can open it', () => {
    const sealed = _sealRaw({ version: 3, identity: id, compressed: randomBytes(64), length: 64 }, key)
    expect(expectCode(sealed, 'unsupported-version').message).toBe(
      `snapshot format version 3 is compressed with zstd, which Node ${process.version} lacks (Node 22.15 and ` +
        'later have it): resume it on such a Node',
    )
  })

  test.runIf(hasZstd)('on a Node with zstd, a zstd bomb stops at the declared length', () => {
    const bomb = (_codecs.zstd as NonNullable<typeof _codecs.zstd>).compressSync(Buffer.alloc(64 * 1024 * 1024))
    expect(bomb.length).toBeLessThan(64 * 1024)
    const sealed = _sealRaw({ version: 3, identity: id, compressed: bomb, length: 1024 }, key)
    expect(expectCode(sealed, 'tampered').message).toMatch(/declared 1024 bytes/)
  })
})
