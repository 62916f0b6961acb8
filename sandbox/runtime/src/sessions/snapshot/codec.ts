import { promisify } from 'node:util'
import * as zlib from 'node:zlib'

/**
 * How a snapshot's segments are compressed, by format version: 2 brotli (every Node), 3 zstd (Node 22.15 and later,
 * where `node:zlib` has it). A process writes zstd where it can: it decompresses a QuickJS heap about three times as
 * fast as brotli at the same size.
 */
export interface Codec {
  readonly version: number
  readonly name: 'brotli' | 'zstd'
  compressSync(segment: Uint8Array): Buffer
  compress(segment: Uint8Array): Promise<Buffer>
  /** Decompresses to at most `maxBytes` (more throws). */
  decompressSync(segment: Uint8Array, maxBytes: number): Buffer
  decompress(segment: Uint8Array, maxBytes: number): Promise<Buffer>
}

/** The output chunk of an asynchronous pass about `bytes` long: between 64 KiB and 8 MiB. */
export function chunkFor(bytes: number): number {
  return Math.max(64 * 1024, Math.min(8 * 1024 * 1024, Math.ceil(bytes)))
}

/**
 * Brotli quality 1: on a QuickJS heap in byte planes it stores 12-14% of it where quality 0 (the fastest) stores
 * 15-17%, for 7-20% more time.
 */
const BROTLI_QUALITY = 1

function brotliOptions(segment: Uint8Array, chunkSize?: number): zlib.BrotliOptions {
  return {
    params: {
      [zlib.constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY,
      [zlib.constants.BROTLI_PARAM_MODE]: zlib.constants.BROTLI_MODE_GENERIC,
      [zlib.constants.BROTLI_PARAM_SIZE_HINT]: segment.byteLength,
    },
    ...(chunkSize !== undefined && { chunkSize }),
  }
}

const brotliCompress = promisify(zlib.brotliCompress)
const brotliDecompress = promisify(zlib.brotliDecompress)

const BROTLI: Codec = {
  version: 2,
  name: 'brotli',
  compressSync: (segment) => zlib.brotliCompressSync(segment, brotliOptions(segment)),
  // Large chunks: the thread pool is asked once per chunk (at the default 16 KiB, thousands of times).
  compress: (segment) => brotliCompress(segment, brotliOptions(segment, chunkFor(segment.byteLength / 4))),
  decompressSync: (segment, maxBytes) =>
    zlib.brotliDecompressSync(segment, { maxOutputLength: maxBytes, chunkSize: chunkFor(maxBytes) }),
  decompress: (segment, maxBytes) =>
    brotliDecompress(segment, { maxOutputLength: maxBytes, chunkSize: chunkFor(maxBytes) }),
}

/** `node:zlib`'s zstd functions, on a Node that has them (its types here are Node 20's, which has not). */
interface ZstdZlib {
  zstdCompressSync(data: Uint8Array, options: object): Buffer
  zstdCompress(data: Uint8Array, options: object, callback: (error: Error | null, out: Buffer) => void): void
  zstdDecompressSync(data: Uint8Array, options: object): Buffer
  zstdDecompress(data: Uint8Array, options: object, callback: (error: Error | null, out: Buffer) => void): void
  constants: { ZSTD_c_compressionLevel: number }
}

function zstdCodec(z: ZstdZlib): Codec {
  // Level 1, the fastest of the regular levels: its output is as small as brotli's quality 1 on a heap.
  const options = (chunkSize?: number): object => ({
    params: { [z.constants.ZSTD_c_compressionLevel]: 1 },
    ...(chunkSize !== undefined && { chunkSize }),
  })
  const compress = promisify(z.zstdCompress.bind(z)) as (data: Uint8Array, options: object) => Promise<Buffer>
  const decompress = promisify(z.zstdDecompress.bind(z)) as (data: Uint8Array, options: object) => Promise<Buffer>
  return {
    version: 3,
    name: 'zstd',
    compressSync: (segment) => z.zstdCompressSync(segment, options()),
    compress: (segment) => compress(segment, options(chunkFor(segment.byteLength / 4))),
    decompressSync: (segment, maxBytes) =>
      z.zstdDecompressSync(segment, { maxOutputLength: maxBytes, chunkSize: chunkFor(maxBytes) }),
    decompress: (segment, maxBytes) =>
      decompress(segment, { maxOutputLength: maxBytes, chunkSize: chunkFor(maxBytes) }),
  }
}

const ZSTD: Codec | undefined =
  typeof (zlib as unknown as Partial<ZstdZlib>).zstdCompressSync === 'function'
    ? zstdCodec(zlib as unknown as ZstdZlib)
    : undefined

/** The codec this process writes: zstd where Node has it, else brotli. */
export const WRITTEN: Codec = ZSTD ?? BROTLI

/** The codec of format `version` if this process reads it; `undefined` for an unknown version or a missing codec. */
export function codecOf(version: number): Codec | undefined {
  if (version === BROTLI.version) return BROTLI
  if (version === 3) return ZSTD
  return undefined
}

/** Why this process cannot open a snapshot of format `version` (see `codecOf`). */
export function unreadableVersion(version: number): string {
  if (version === 3)
    return (
      `snapshot format version 3 is compressed with zstd, which Node ${process.version} lacks (Node 22.15 and later ` +
      'have it): resume it on such a Node'
    )
  return (
    `snapshot format version ${version} is not supported; this build reads versions 2 and 3: ` +
    'resume it with the build that sealed it'
  )
}

/** Testing: the codecs by name, the ones this process has. */
export const _codecs: { readonly brotli: Codec; readonly zstd: Codec | undefined } = { brotli: BROTLI, zstd: ZSTD }
