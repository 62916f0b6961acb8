/**
 * The byte shuffle a session snapshot applies to the engine memory before compression (as Blosc's
 * shuffle filter does): within each 64 KiB block, the memory is read as 8-byte words and written as 8
 * planes, the first bytes of every word, then the second bytes, and so on. QuickJS's heap is mostly
 * 8-byte values (tagged values, pointers, small numbers) whose high bytes repeat from word to word: in
 * planes they become long runs the compressor takes for almost nothing. Measured on 29 MiB of a heap of
 * JSON-like records: brotli quality 0 stores 22.8% of it unshuffled, 12.2% shuffled, and runs faster.
 *
 * Done by a small WebAssembly module with SIMD (`byte-planes.wat`) a megabyte at a time, the bytes copied
 * in and out of its memory: about twice as fast as JavaScript (30 MiB in 8-9 ms against 15-17 once warm,
 * 22 against 31-37 on a first call), byte for byte the same. JavaScript does what the module does not:
 * everything where WebAssembly SIMD is missing, and a last block whose length is not a multiple of 128.
 * The JavaScript works on 32-byte groups through 32-bit views (four words' plane bytes make one 32-bit
 * store); both leave the bytes past the last whole group as they are.
 */
import { BYTE_PLANES_WASM } from './byte-planes-wasm.js'

const BLOCK_BYTES = 64 * 1024
const GROUP_BYTES = 32

/** Writes the planes of `src` to `out` (same length); both must start 4-byte aligned. */
export function toBytePlanes(src: Uint8Array, out: Uint8Array): void {
  convert(src, out, 'toPlanes', jsToBytePlanes)
}

/** The inverse of `toBytePlanes`. */
export function fromBytePlanes(src: Uint8Array, out: Uint8Array): void {
  convert(src, out, 'fromPlanes', jsFromBytePlanes)
}

/** {@link toBytePlanes} in JavaScript alone. */
export function jsToBytePlanes(src: Uint8Array, out: Uint8Array): void {
  eachBlock(src, out, (s, o, base, plane) => {
    for (let g = 0; g < plane; g++) {
      const w = base + g * 8
      const a0 = s[w] as number
      const a1 = s[w + 1] as number
      const b0 = s[w + 2] as number
      const b1 = s[w + 3] as number
      const c0 = s[w + 4] as number
      const c1 = s[w + 5] as number
      const d0 = s[w + 6] as number
      const d1 = s[w + 7] as number
      const at = base + g
      o[at] = (a0 & 0xff) | ((b0 & 0xff) << 8) | ((c0 & 0xff) << 16) | ((d0 & 0xff) << 24)
      o[at + plane] = ((a0 >>> 8) & 0xff) | (b0 & 0xff00) | ((c0 & 0xff00) << 8) | ((d0 & 0xff00) << 16)
      o[at + 2 * plane] = ((a0 >>> 16) & 0xff) | ((b0 >>> 8) & 0xff00) | (c0 & 0xff0000) | ((d0 & 0xff0000) << 8)
      o[at + 3 * plane] = (a0 >>> 24) | ((b0 >>> 16) & 0xff00) | ((c0 >>> 8) & 0xff0000) | (d0 & 0xff000000)
      o[at + 4 * plane] = (a1 & 0xff) | ((b1 & 0xff) << 8) | ((c1 & 0xff) << 16) | ((d1 & 0xff) << 24)
      o[at + 5 * plane] = ((a1 >>> 8) & 0xff) | (b1 & 0xff00) | ((c1 & 0xff00) << 8) | ((d1 & 0xff00) << 16)
      o[at + 6 * plane] = ((a1 >>> 16) & 0xff) | ((b1 >>> 8) & 0xff00) | (c1 & 0xff0000) | ((d1 & 0xff0000) << 8)
      o[at + 7 * plane] = (a1 >>> 24) | ((b1 >>> 16) & 0xff00) | ((c1 >>> 8) & 0xff0000) | (d1 & 0xff000000)
    }
  })
}

/** {@link fromBytePlanes} in JavaScript alone. */
export function jsFromBytePlanes(src: Uint8Array, out: Uint8Array): void {
  eachBlock(src, out, (s, o, base, plane) => {
    for (let g = 0; g < plane; g++) {
      const at = base + g
      const p0 = s[at] as number
      const p1 = s[at + plane] as number
      const p2 = s[at + 2 * plane] as number
      const p3 = s[at + 3 * plane] as number
      const p4 = s[at + 4 * plane] as number
      const p5 = s[at + 5 * plane] as number
      const p6 = s[at + 6 * plane] as number
      const p7 = s[at + 7 * plane] as number
      const w = base + g * 8
      o[w] = (p0 & 0xff) | ((p1 & 0xff) << 8) | ((p2 & 0xff) << 16) | ((p3 & 0xff) << 24)
      o[w + 1] = (p4 & 0xff) | ((p5 & 0xff) << 8) | ((p6 & 0xff) << 16) | ((p7 & 0xff) << 24)
      o[w + 2] = ((p0 >>> 8) & 0xff) | (p1 & 0xff00) | ((p2 & 0xff00) << 8) | ((p3 & 0xff00) << 16)
      o[w + 3] = ((p4 >>> 8) & 0xff) | (p5 & 0xff00) | ((p6 & 0xff00) << 8) | ((p7 & 0xff00) << 16)
      o[w + 4] = ((p0 >>> 16) & 0xff) | ((p1 >>> 8) & 0xff00) | (p2 & 0xff0000) | ((p3 & 0xff0000) << 8)
      o[w + 5] = ((p4 >>> 16) & 0xff) | ((p5 >>> 8) & 0xff00) | (p6 & 0xff0000) | ((p7 & 0xff0000) << 8)
      o[w + 6] = (p0 >>> 24) | ((p1 >>> 16) & 0xff00) | ((p2 >>> 8) & 0xff0000) | (p3 & 0xff000000)
      o[w + 7] = (p4 >>> 24) | ((p5 >>> 16) & 0xff00) | ((p6 >>> 8) & 0xff0000) | (p7 & 0xff000000)
    }
  })
}

/**
 * Calls `convert` for each 64 KiB block of the whole 32-byte groups, with 32-bit views of both, the
 * block's first word and its plane length in words; copies the bytes past the last group as they are.
 * Throws when the two differ in length or are not 4-byte aligned.
 */
function eachBlock(
  src: Uint8Array,
  out: Uint8Array,
  convert: (s: Uint32Array, o: Uint32Array, base: number, plane: number) => void,
): void {
  if (src.byteLength !== out.byteLength) throw new RangeError('byte planes: the source and the output differ in length')
  if (src.byteOffset % 4 !== 0 || out.byteOffset % 4 !== 0)
    throw new RangeError('byte planes: the source and the output must start 4-byte aligned')
  const full = src.byteLength - (src.byteLength % GROUP_BYTES)
  const s = new Uint32Array(src.buffer, src.byteOffset, full >> 2)
  const o = new Uint32Array(out.buffer, out.byteOffset, full >> 2)
  for (let block = 0; block < full; block += BLOCK_BYTES)
    convert(s, o, block >> 2, Math.min(BLOCK_BYTES, full - block) / GROUP_BYTES)
  out.set(src.subarray(full), full)
}

/** The bytes the module converts per call: its memory holds them twice (in, then out). */
const CHUNK_BYTES = 1024 * 1024

interface Kernel {
  readonly memory: Uint8Array
  readonly toPlanes: (len: number) => void
  readonly fromPlanes: (len: number) => void
}

/** This thread's instance of the module, made on first use; null where it cannot run (no WebAssembly SIMD). */
let kernel: Kernel | null | undefined

function loadedKernel(): Kernel | null {
  return (kernel ??= loadKernel())
}

/** The slice of the WebAssembly API used here (this project's `lib` has no DOM types). */
const Wasm = (
  globalThis as unknown as {
    WebAssembly: {
      Module: new (bytes: Uint8Array) => object
      Instance: new (
        module: object,
      ) => {
        readonly exports: {
          memory: { buffer: ArrayBuffer }
          toPlanes: Kernel['toPlanes']
          fromPlanes: Kernel['fromPlanes']
        }
      }
    }
  }
).WebAssembly

function loadKernel(): Kernel | null {
  try {
    const { memory, toPlanes, fromPlanes } = new Wasm.Instance(new Wasm.Module(Buffer.from(BYTE_PLANES_WASM, 'base64')))
      .exports
    return { memory: new Uint8Array(memory.buffer, 0, 2 * CHUNK_BYTES), toPlanes, fromPlanes }
  } catch {
    return null
  }
}

/** What converts byte planes on this thread: the WebAssembly module, or JavaScript where it cannot run. */
export function bytePlanesEngine(): 'webassembly' | 'javascript' {
  return loadedKernel() === null ? 'javascript' : 'webassembly'
}

/**
 * One direction over the whole of `src`: the module takes whole 64 KiB blocks a megabyte at a time (a
 * block's planes are its own, so chunks of whole blocks convert as the whole would), and the last block too
 * when its length is a multiple of 128; `js` the rest.
 */
function convert(
  src: Uint8Array,
  out: Uint8Array,
  direction: 'toPlanes' | 'fromPlanes',
  js: (src: Uint8Array, out: Uint8Array) => void,
): void {
  if (src.byteLength !== out.byteLength) throw new RangeError('byte planes: the source and the output differ in length')
  if (src.byteOffset % 4 !== 0 || out.byteOffset % 4 !== 0)
    throw new RangeError('byte planes: the source and the output must start 4-byte aligned')
  const module = loadedKernel()
  if (module === null) return js(src, out)
  const full = src.byteLength - (src.byteLength % GROUP_BYTES)
  const lastBlock = full % BLOCK_BYTES
  const wasmBytes = lastBlock % 128 === 0 ? full : full - lastBlock
  const { memory } = module
  const run = module[direction]
  for (let at = 0; at < wasmBytes; at += CHUNK_BYTES) {
    const length = Math.min(CHUNK_BYTES, wasmBytes - at)
    memory.set(src.subarray(at, at + length), 0)
    run(length)
    out.set(memory.subarray(CHUNK_BYTES, CHUNK_BYTES + length), at)
  }
  // What is left starts on a block boundary: the JavaScript's blocks there are the whole's.
  js(src.subarray(wasmBytes), out.subarray(wasmBytes))
}
