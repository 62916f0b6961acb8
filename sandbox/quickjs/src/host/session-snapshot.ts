import { createHash } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { endianness } from 'node:os'
import { GUEST_PRELUDE, type ParkedHostCall } from '@ptc/sandbox/backend'
import type { CodeRunLimits, JsonValue } from '@ptc/sandbox'
import { SnapshotError } from '@ptc/sandbox/session'
import type { SessionMemory } from '../engine/session-memory.js'
import { wasmPath, type QuickJSVariantName } from '../engine/module.js'
import { fromBytePlanes, toBytePlanes } from './byte-planes.js'

/**
 * A QuickJS session, or a suspended run, as bytes (the payload a sealed snapshot carries): a JSON header
 * (format, kind, state id, engine fingerprint, memory size, sizes, and the kind's own fields; padded
 * with spaces so the data starts 8-byte aligned) then the ranges (u32 little-endian) and the data as
 * byte planes (`toBytePlanes`: what makes the engine memory compress to half the size).
 */
const FORMAT = 2

export interface SavedSession {
  memory: SessionMemory
  runs: number
}

/** What a suspended run needs besides its memory to go on (`QuickJSCodeRuntime.resumeRun`). */
export interface SavedRun {
  memory: SessionMemory
  code: string
  language: 'typescript' | 'javascript'
  bindings: readonly string[]
  limits: CodeRunLimits
  cpuMs: number
  subCalls: number
  outputBytes: number
  /** What was left of the wall ceiling when it suspended. */
  wallRemainingMs: number
  parked: readonly ParkedHostCall[]
  /** Its log entries before it suspended. */
  logs: readonly string[]
  data?: JsonValue
  /**
   * A session run: its session's key and the programs it had run before this one (`memory` holds its state);
   * `stored`: its session is held for the resume in a session store that claims (a runtime without one cannot
   * give the resume that session).
   */
  session?: { key: string; runs: number; stored?: true }
}

export function encodeSession({ memory, runs }: SavedSession): Uint8Array {
  return encodeMemory(memory, { kind: 'session', runs })
}

/** The session in `bytes` (an authenticated payload, still checked: nothing malformed reaches an engine). */
export function decodeSession(bytes: Uint8Array): SavedSession {
  const { memory, fields } = decodeMemory(bytes, 'session')
  const runs = fields.runs
  if (!whole(runs)) throw malformed('session', 'bad sizes')
  return { memory, runs }
}

export function encodeRun({ memory, data, ...fields }: SavedRun): Uint8Array {
  // `data` names the data size in the header: the host's data goes as `hostData`.
  return encodeMemory(memory, { kind: 'run', ...fields, ...(data !== undefined && { hostData: data }) })
}

/** The suspended run in `bytes` (authenticated, still checked). */
export function decodeRun(bytes: Uint8Array): SavedRun {
  const { memory, fields } = decodeMemory(bytes, 'run')
  const { hostData, ...rest } = fields
  const f = rest as Partial<Omit<SavedRun, 'memory'>>
  const strings = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === 'string')
  const ok =
    typeof f.code === 'string' &&
    (f.language === 'typescript' || f.language === 'javascript') &&
    strings(f.bindings) &&
    strings(f.logs) &&
    typeof f.limits === 'object' &&
    f.limits !== null &&
    [f.cpuMs, f.subCalls, f.outputBytes, f.wallRemainingMs].every(
      (n) => typeof n === 'number' && Number.isFinite(n) && n >= 0,
    ) &&
    (f.session === undefined ||
      (typeof f.session === 'object' &&
        f.session !== null &&
        typeof f.session.key === 'string' &&
        whole(f.session.runs) &&
        (f.session.stored === undefined || f.session.stored === true))) &&
    Array.isArray(f.parked) &&
    f.parked.every(
      (c) =>
        typeof c === 'object' &&
        c !== null &&
        whole(c.id) &&
        typeof c.name === 'string' &&
        typeof c.argsJson === 'string',
    )
  if (!ok) throw malformed('run', 'missing or bad fields')
  return {
    memory,
    ...(f as Omit<SavedRun, 'memory' | 'data'>),
    ...(hostData !== undefined && { data: hostData as JsonValue }),
  }
}

function encodeMemory(memory: SessionMemory, fields: Record<string, unknown>): Uint8Array {
  const json = JSON.stringify({
    ...fields,
    format: FORMAT,
    id: memory.id,
    fingerprint: memory.fingerprint,
    byteLength: memory.byteLength,
    ranges: memory.ranges.length,
    data: memory.data.byteLength,
  })
  // Padded so that the data (after the length word, the header and the ranges, a multiple of 8 bytes) starts 8-byte
  // aligned.
  const header = Buffer.from(json.padEnd(json.length + ((8 - ((4 + Buffer.byteLength(json)) % 8)) % 8)))
  const out = new Uint8Array(4 + header.length + memory.ranges.byteLength + memory.data.byteLength)
  const view = new DataView(out.buffer)
  view.setUint32(0, header.length, true)
  out.set(header, 4)
  let at = 4 + header.length
  for (let i = 0; i < memory.ranges.length; i++, at += 4) view.setUint32(at, memory.ranges[i] as number, true)
  toBytePlanes(aligned(memory.data), out.subarray(at))
  return out
}

/** `bytes`, or a copy of them when they do not start 4-byte aligned (the byte planes read 32-bit words). */
function aligned(bytes: Uint8Array): Uint8Array {
  return bytes.byteOffset % 4 === 0 ? bytes : new Uint8Array(bytes)
}

function whole(n: unknown): n is number {
  return typeof n === 'number' && Number.isSafeInteger(n) && n >= 0
}

function malformed(kind: 'session' | 'run', why: string): SnapshotError {
  const what = kind === 'session' ? 'session snapshot' : 'suspended run'
  return new SnapshotError('tampered', `the ${what}'s payload is malformed: ${why}`)
}

/** Authentic bytes of the other kind: a suspended run's state given as a session's, or the reverse. */
function otherKind(kind: 'session' | 'run'): SnapshotError {
  const message =
    kind === 'session'
      ? "these bytes hold a suspended run's state, not a session: resume the run with openRun and resumeRun"
      : 'these bytes hold a session, not a suspended run: resume the session with resumeSession'
  return new SnapshotError('foreign-session', message)
}

/** The memory in `bytes` and the header's other fields; a payload of another kind is refused. */
function decodeMemory(
  bytes: Uint8Array,
  kind: 'session' | 'run',
): { memory: SessionMemory; fields: Record<string, unknown> } {
  const fail = (why: string): never => {
    throw malformed(kind, why)
  }
  if (bytes.byteLength < 4) fail('too short')
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const headerLength = view.getUint32(0, true)
  if (4 + headerLength > bytes.byteLength) fail('its header runs past its end')
  let header: Record<string, unknown>
  try {
    header = JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset + 4, headerLength).toString('utf8')) as Record<
      string,
      unknown
    >
  } catch {
    return fail('its header is not JSON')
  }
  if (typeof header !== 'object' || header === null) fail('its header is not an object')
  if (header.format !== FORMAT) fail(`format ${String(header.format)}, this build reads ${FORMAT}`)
  // A payload without a kind is a session's.
  if ((header.kind ?? 'session') !== kind) throw otherKind(kind)
  const { id, fingerprint, byteLength, ranges: count, data: dataBytes, ...fields } = header
  if (typeof id !== 'string' || typeof fingerprint !== 'string') fail('no state id or fingerprint')
  if (!whole(byteLength) || !whole(count) || !whole(dataBytes) || count % 2 !== 0) fail('bad sizes')
  const rangesAt = 4 + headerLength
  if (rangesAt + (count as number) * 4 + (dataBytes as number) !== bytes.byteLength) fail('its sizes do not add up')
  const ranges = new Uint32Array(count as number)
  let total = 0
  let last = 0
  for (let i = 0; i < ranges.length; i += 2) {
    const start = view.getUint32(rangesAt + i * 4, true)
    const end = view.getUint32(rangesAt + (i + 1) * 4, true)
    if (start < last || end <= start || end > (byteLength as number))
      fail('its ranges are not ascending within the memory')
    ranges[i] = start
    ranges[i + 1] = end
    total += end - start
    last = end
  }
  if (total !== dataBytes) fail('its data does not match its ranges')
  const data = new Uint8Array(dataBytes as number)
  fromBytePlanes(aligned(bytes.subarray(rangesAt + (count as number) * 4)), data)
  return {
    memory: { id: id as string, fingerprint: fingerprint as string, byteLength: byteLength as number, ranges, data },
    fields,
  }
}

const builds = new Map<QuickJSVariantName, Promise<string>>()

/**
 * What a snapshot is bound to: the engine variant, its WebAssembly and the guest prelude (the booted
 * image is made of these). A session suspended by another build is refused before any byte of it is used.
 */
export function sessionBuild(variant: QuickJSVariantName): Promise<string> {
  let build = builds.get(variant)
  if (build === undefined) {
    build = readFile(wasmPath(variant)).then(
      // The byte order too: the byte planes are read and written as the platform's 32-bit words.
      (wasm) =>
        `ptc-quickjs/${variant}/${createHash('sha256').update(wasm).update(GUEST_PRELUDE).update(String(FORMAT)).update(endianness()).digest('hex').slice(0, 32)}`,
    )
    builds.set(variant, build)
  }
  return build
}
