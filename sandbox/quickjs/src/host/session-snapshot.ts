import { createHash } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { GUEST_PRELUDE } from '@ptc/sandbox/backend'
import type { SessionMemory } from '../engine/image.js'
import type { QuickJSVariantName } from '../engine/module.js'

/**
 * A QuickJS session as bytes (the payload a sealed snapshot carries): a JSON header (format, state id,
 * engine fingerprint, memory size, runs, sizes) then the ranges (u32 little-endian) and the data.
 */
const FORMAT = 1

export interface SavedSession {
  memory: SessionMemory
  runs: number
}

export function encodeSession({ memory, runs }: SavedSession): Uint8Array {
  const header = Buffer.from(
    JSON.stringify({ format: FORMAT, id: memory.id, fingerprint: memory.fingerprint, byteLength: memory.byteLength, runs, ranges: memory.ranges.length, data: memory.data.byteLength }),
  )
  const out = new Uint8Array(4 + header.length + memory.ranges.byteLength + memory.data.byteLength)
  const view = new DataView(out.buffer)
  view.setUint32(0, header.length, true)
  out.set(header, 4)
  let at = 4 + header.length
  for (let i = 0; i < memory.ranges.length; i++, at += 4) view.setUint32(at, memory.ranges[i] as number, true)
  out.set(memory.data, at)
  return out
}

/** The session in `bytes` (an authenticated payload, still checked: nothing malformed reaches an engine). */
export function decodeSession(bytes: Uint8Array): SavedSession {
  const fail = (why: string): never => {
    throw new Error(`the session snapshot's payload is malformed: ${why}`)
  }
  if (bytes.byteLength < 4) fail('too short')
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const headerLength = view.getUint32(0, true)
  if (4 + headerLength > bytes.byteLength) fail('its header runs past its end')
  let header: { format?: unknown; id?: unknown; fingerprint?: unknown; byteLength?: unknown; runs?: unknown; ranges?: unknown; data?: unknown }
  try {
    header = JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset + 4, headerLength).toString('utf8')) as typeof header
  } catch {
    return fail('its header is not JSON')
  }
  if (header.format !== FORMAT) fail(`format ${String(header.format)}, this build reads ${FORMAT}`)
  const { id, fingerprint, byteLength, runs, ranges: count, data: dataBytes } = header
  if (typeof id !== 'string' || typeof fingerprint !== 'string') fail('no state id or fingerprint')
  const whole = (n: unknown): n is number => typeof n === 'number' && Number.isSafeInteger(n) && n >= 0
  if (!whole(byteLength) || !whole(runs) || !whole(count) || !whole(dataBytes) || count % 2 !== 0) fail('bad sizes')
  const rangesAt = 4 + headerLength
  if (rangesAt + (count as number) * 4 + (dataBytes as number) !== bytes.byteLength) fail('its sizes do not add up')
  const ranges = new Uint32Array(count as number)
  let total = 0
  let last = 0
  for (let i = 0; i < ranges.length; i += 2) {
    const start = view.getUint32(rangesAt + i * 4, true)
    const end = view.getUint32(rangesAt + (i + 1) * 4, true)
    if (start < last || end <= start || end > (byteLength as number)) fail('its ranges are not ascending within the memory')
    ranges[i] = start
    ranges[i + 1] = end
    total += end - start
    last = end
  }
  if (total !== dataBytes) fail('its data does not match its ranges')
  const data = bytes.slice(rangesAt + (count as number) * 4)
  return { memory: { id: id as string, fingerprint: fingerprint as string, byteLength: byteLength as number, ranges, data }, runs: runs as number }
}

const builds = new Map<QuickJSVariantName, Promise<string>>()

/**
 * What a snapshot is bound to: the engine variant, its WebAssembly and the guest prelude (the booted
 * image is made of these). A session suspended by another build is refused before any byte of it is used.
 */
export function sessionBuild(variant: QuickJSVariantName): Promise<string> {
  let build = builds.get(variant)
  if (build === undefined) {
    const pkg = variant === 'quickjs' ? '@jitl/quickjs-wasmfile-release-sync' : '@jitl/quickjs-ng-wasmfile-release-sync'
    build = readFile(createRequire(import.meta.url).resolve(`${pkg}/wasm`)).then(
      (wasm) => `ptc-quickjs/${variant}/${createHash('sha256').update(wasm).update(GUEST_PRELUDE).update(String(FORMAT)).digest('hex').slice(0, 32)}`,
    )
    builds.set(variant, build)
  }
  return build
}
