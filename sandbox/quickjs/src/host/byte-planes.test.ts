import { randomBytes } from 'node:crypto'
import { describe, expect, test } from 'vitest'
import { readFileSync } from 'node:fs'
import { assembleBytePlanes, bytePlanesModule } from '../../../../scripts/byte-planes-wasm.js'
import { bytePlanesEngine, fromBytePlanes, jsFromBytePlanes, jsToBytePlanes, toBytePlanes } from './byte-planes.js'

const roundTrip = (src: Uint8Array): Uint8Array => {
  const planes = new Uint8Array(src.byteLength)
  toBytePlanes(src, planes)
  const back = new Uint8Array(src.byteLength)
  fromBytePlanes(planes, back)
  return back
}

describe('byte planes (the shuffle of a session snapshot)', () => {
  test('round trip: random bytes of lengths around the 32-byte group and the 64 KiB block, a tail copied as is', () => {
    for (const length of [0, 1, 31, 32, 33, 4096, 65_535, 65_536, 65_568, 200_003, 1_048_576 + 40]) {
      const src = new Uint8Array(randomBytes(length))
      expect(Buffer.from(roundTrip(src)).equals(Buffer.from(src)), `length ${length}`).toBe(true)
    }
  })

  test('the planes are the bytes of each 8-byte word in turn: plane k holds byte k of every word of its block', () => {
    // Word i of the block is eight copies of (i & 0xff) except byte 7, which is 0xa0 + (i % 8).
    const words = 64
    const src = new Uint8Array(words * 8)
    for (let i = 0; i < words; i++) {
      src.fill(i & 0xff, i * 8, i * 8 + 7)
      src[i * 8 + 7] = 0xa0 + (i % 8)
    }
    const planes = new Uint8Array(src.byteLength)
    toBytePlanes(src, planes)
    for (let k = 0; k < 7; k++)
      expect([...planes.subarray(k * words, (k + 1) * words)]).toEqual(Array.from({ length: words }, (_, i) => i))
    expect([...planes.subarray(7 * words)]).toEqual(Array.from({ length: words }, (_, i) => 0xa0 + (i % 8)))
  })

  test('the WebAssembly module gives what the JavaScript gives, byte for byte, both ways: whole chunks, short last blocks, tails', () => {
    // Node 20 has WebAssembly SIMD: the module runs here (JavaScript is the fallback where it cannot).
    expect(bytePlanesEngine()).toBe('webassembly')
    // Around the module's megabyte, the 64 KiB block, the 128-byte step it takes and the 32-byte group.
    const lengths = [
      128,
      160,
      4096,
      4128,
      65_536,
      65_536 + 128,
      65_536 + 96,
      65_536 + 131,
      1_048_576,
      1_048_576 + 65_536 * 3 + 640,
      3 * 1_048_576 + 65_536 + 100 + 7,
    ]
    for (const length of lengths) {
      const src = new Uint8Array(randomBytes(length))
      const [planes, expected] = [new Uint8Array(length), new Uint8Array(length)]
      toBytePlanes(src, planes)
      jsToBytePlanes(src, expected)
      expect(Buffer.from(planes).equals(Buffer.from(expected)), `planes of ${length} bytes`).toBe(true)
      const [back, expectedBack] = [new Uint8Array(length), new Uint8Array(length)]
      fromBytePlanes(src, back)
      jsFromBytePlanes(src, expectedBack)
      expect(Buffer.from(back).equals(Buffer.from(expectedBack)), `words of ${length} bytes`).toBe(true)
    }
  })

  test('the module shipped is the one its text assembles to (scripts/byte-planes-wasm.ts)', async () => {
    const shipped = readFileSync(new URL('./byte-planes-wasm.ts', import.meta.url), 'utf8')
    expect(shipped).toBe(bytePlanesModule(await assembleBytePlanes()))
  })

  test('misuse is a RangeError: lengths that differ, a view not 4-byte aligned', () => {
    const buffer = new ArrayBuffer(128)
    expect(() => toBytePlanes(new Uint8Array(buffer, 0, 64), new Uint8Array(64 + 8))).toThrow(RangeError)
    expect(() => toBytePlanes(new Uint8Array(buffer, 2, 64), new Uint8Array(64))).toThrow(/aligned/)
    expect(() => fromBytePlanes(new Uint8Array(64), new Uint8Array(buffer, 1, 64))).toThrow(/aligned/)
  })
})
