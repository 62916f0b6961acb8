import { jsonText } from './json-text.js'
import { parkingOf, type Parking } from './park.js'
import { MAX_VALUE_DEPTH } from './prelude/protocol.js'
import type { CodeRunError, CodeRunRequest, JsonValue } from './types.js'

/** A readable message for anything a host `call` rejected with; total. */
export function messageOf(error: unknown): string {
  try {
    if (error instanceof Error) return error.message
    return String(error)
  } catch {
    return 'unknown error'
  }
}

/** What a guest can receive: results past either bound reject their call instead. */
export interface ResultBounds {
  /** The deepest nesting the guest's engine can parse. */
  readonly maxDepth?: number
  /**
   * The longest JSON text, in UTF-16 units: one longer cannot fit the guest's memory (each unit
   * takes at least a byte there), so it is refused before it is sent. Backends pass `memoryBytes`.
   */
  readonly maxChars?: number
  /** What `maxChars` is, after "more than" in the refusal; default: this sandbox's memory can hold. */
  readonly beyond?: string
}

/**
 * The `SettleEntry` text that fulfils call `id` with a host result: `[id,1,value]`.
 * Deep results serialize without overflowing the host's stack; a result that is
 * not JSON, nests deeper than `bounds.maxDepth` or is longer than `bounds.maxChars`
 * rejects the call instead.
 */
export function fulfilEntry(id: number, value: unknown, bounds: ResultBounds = {}): string {
  const { maxDepth = Number.POSITIVE_INFINITY, maxChars = Number.POSITIVE_INFINITY } = bounds
  const beyond = bounds.beyond ?? `this sandbox's memory (${maxChars} bytes) can hold`
  const tooLong = (chars: string): string =>
    rejectEntry(id, new Error(`the tool result is ${chars} characters of JSON, more than ${beyond}`))
  // A string's JSON text is at least the string and its two quotes: one too long is refused unserialized.
  if (typeof value === 'string' && value.length + 2 > maxChars) return tooLong(`at least ${value.length + 2}`)
  let json: string | undefined
  try {
    json = jsonText(value === undefined ? null : value)
  } catch (error) {
    return rejectEntry(id, new Error(`the tool result is not JSON: ${messageOf(error)}`))
  }
  // The length first: it costs nothing, the depth a pass over the text.
  if (json !== undefined && json.length > maxChars) return tooLong(String(json.length))
  if (json !== undefined && textNestsDeeperThan(json, maxDepth)) {
    return rejectEntry(
      id,
      new Error(`the tool result nests more than ${maxDepth} levels deep, more than this sandbox can receive`),
    )
  }
  return `[${id},1,${json ?? 'null'}]`
}

/** A stable error code as it may cross into the guest: upper-case words joined by `_`. */
const ERROR_CODE = /^[A-Z][A-Z0-9_]{0,63}$/
/** The deepest and longest `details` that cross with a rejection; larger details are left out. */
const MAX_DETAILS_DEPTH = 32
const MAX_DETAILS_CHARS = 64 * 1024
/**
 * The longest rejection message that crosses, in UTF-16 units; a longer one is cut there, with a note. A
 * message is no place for data, and a host error's message of 300 million quotes made `JSON.stringify`
 * throw where nothing caught it: the host process ended.
 */
const MAX_MESSAGE_CHARS = 64 * 1024

/**
 * The `SettleEntry` text that rejects call `id`: `[id,0,"message"]` (its first 64 Ki characters), plus
 * the rejection's `code` when it has a stable one (`error.code`, e.g. `DENIED`), and its JSON `details`
 * when it has them (at most 32 levels and 64 Ki characters of JSON text): `[id,0,"message","CODE",details]`.
 * Nothing else of the host's error crosses: no stack, no prototype, no other property.
 */
export function rejectEntry(id: number, error: unknown): string {
  const text = messageOf(error)
  const message = JSON.stringify(
    text.length <= MAX_MESSAGE_CHARS
      ? text
      : `${text.slice(0, MAX_MESSAGE_CHARS)}… (cut from ${text.length} characters)`,
  )
  const code = readProperty(error, 'code')
  if (typeof code !== 'string' || !ERROR_CODE.test(code)) return `[${id},0,${message}]`
  const details = readProperty(error, 'details')
  let detailsJson: string | undefined
  if (details !== undefined && !nestsDeeperThan(details, MAX_DETAILS_DEPTH)) {
    try {
      detailsJson = jsonText(details)
    } catch {
      detailsJson = undefined
    }
  }
  return detailsJson === undefined || detailsJson.length > MAX_DETAILS_CHARS
    ? `[${id},0,${message},"${code}"]`
    : `[${id},0,${message},"${code}",${detailsJson}]`
}

/** One property of a thrown value, read once; undefined when it is not an object or the read throws. */
function readProperty(value: unknown, key: string): unknown {
  if (typeof value !== 'object' || value === null) return undefined
  try {
    return (value as Record<string, unknown>)[key]
  } catch {
    return undefined
  }
}

/**
 * Whether JSON text (as `JSON.stringify` writes it) nests arrays and objects more than `max` deep.
 * Each level takes two characters, so a text shorter than `2 * (max + 1)` is not read at all: a
 * typical result costs one comparison. A text with at most `max` opening brackets in all (inside
 * strings too) cannot nest deeper: counted with native searches, which a 16 MB string of text passes
 * in milliseconds where the scan below took 100 ms.
 */
function textNestsDeeperThan(text: string, max: number): boolean {
  if (text.length < 2 * (max + 1) || !openersExceed(text, max)) return false
  let depth = 0
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === 0x22) {
      // A string: skip to its closing quote (a backslash escapes the next character).
      for (i++; i < text.length; i++) {
        const d = text.charCodeAt(i)
        if (d === 0x5c) i++
        else if (d === 0x22) break
      }
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true
    } else if (c === 0x5d || c === 0x7d) depth--
  }
  return false
}

/** Whether `text` has more than `max` characters `[` and `{` in all. */
function openersExceed(text: string, max: number): boolean {
  let count = 0
  for (const opener of ['[', '{']) {
    for (let i = text.indexOf(opener); i !== -1; i = text.indexOf(opener, i + 1)) if (++count > max) return true
  }
  return false
}

/** Whether a JSON value has objects or arrays nested more than `max` deep (iterative, stops at the first). */
export function nestsDeeperThan(value: unknown, max: number): boolean {
  if (max === Number.POSITIVE_INFINITY) return false
  const stack: [unknown, number][] = [[value, 0]]
  while (stack.length > 0) {
    const [node, depth] = stack.pop() as [unknown, number]
    if (typeof node !== 'object' || node === null) continue
    if (depth + 1 > max) return true
    for (const child of Array.isArray(node) ? node : Object.values(node)) {
      if (typeof child === 'object' && child !== null) stack.push([child, depth + 1])
    }
  }
  return false
}

/**
 * One host call as both backends make it: the guest's argument text is parsed,
 * `request.call` runs (a synchronous throw counts as a rejection), and the
 * outcome becomes its `SettleEntry` text. Never rejects. With `park` (a durable
 * run), a `parkCall` rejection comes back as its parking instead of an entry.
 *
 * The parse is made for this call alone and handed over: `request.call` owns the
 * value (the contract of `CodeRunRequest.call`), so it may keep or freeze it
 * without copying.
 */
export function settleHostCall(
  request: CodeRunRequest,
  id: number,
  name: string,
  argsJson: string,
  signal: AbortSignal,
  bounds: ResultBounds = {},
  park = false,
): Promise<string | Parking> {
  let pending: Promise<JsonValue>
  try {
    // The prelude refuses deeper arguments where it makes their text: this only holds if it did not.
    if (textNestsDeeperThan(argsJson, MAX_VALUE_DEPTH))
      throw new Error(`the arguments nest more than ${MAX_VALUE_DEPTH} levels deep`)
    pending = Promise.resolve(request.call(name, JSON.parse(argsJson) as JsonValue, signal))
  } catch (error) {
    pending = Promise.reject(error)
  }
  return pending.then(
    (value) => fulfilEntry(id, value, bounds),
    (error: unknown) => (park ? parkingOf(error) : undefined) ?? rejectEntry(id, error),
  )
}

/**
 * The program's value from the JSON text its prelude made, or the `invalid-output` failure of a value
 * nested deeper than `MAX_VALUE_DEPTH` (the prelude refuses those first: this only holds if it did not).
 */
export function parseProgramValue(text: string): { value: JsonValue } | { error: CodeRunError } {
  if (textNestsDeeperThan(text, MAX_VALUE_DEPTH))
    return {
      error: { kind: 'invalid-output', message: `the return value is nested more than ${MAX_VALUE_DEPTH} levels deep` },
    }
  return { value: JSON.parse(text) as JsonValue }
}
