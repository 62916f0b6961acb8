import { describeThrown } from '../errors.js'
import { _frozenArray, _frozenObject, _markMaterialized, _pointer } from './build.js'
import { _isLosslessNumberToken } from './number.js'
import type { JsonValue } from './types.js'

/** Result of {@link parseJsonArguments}. */
export type ParseJsonResult = { ok: true; value: JsonValue } | { ok: false; message: string }

/** An open container while parsing; `keys` is `undefined` for arrays. */
interface Frame {
  readonly keys: string[] | undefined
  readonly values: JsonValue[]
  seen: Set<string> | undefined
}

function where(path: string): string {
  return path === '' ? '(root)' : path
}

class ParseFailure {
  constructor(readonly message: string) {}
}

const SPACE = 0x20
const TAB = 0x09
const LF = 0x0a
const CR = 0x0d
const QUOTE = 0x22
const BACKSLASH = 0x5c
const ESCAPES: Readonly<Record<string, string>> = {
  '"': '"',
  '\\': '\\',
  '/': '/',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
}
const NUMBER_TOKEN = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y
const SAFE_INTEGER_TOKEN = /^-?(?:0|[1-9]\d{0,14})$/

/** The strict RFC 8259 parser, iterative over an explicit stack. */
class Parser {
  private pos = 0
  private readonly stack: Frame[] = []
  constructor(private readonly text: string) {}

  /** Path of the value being read; with `key`, of that key in the innermost open object. */
  private path(key?: string): string {
    const segments: string[] = []
    const frames = key === undefined ? this.stack : this.stack.slice(0, -1)
    for (const frame of frames) {
      segments.push(frame.keys === undefined ? String(frame.values.length) : (frame.keys[frame.keys.length - 1] ?? ''))
    }
    if (key !== undefined) segments.push(key)
    return _pointer(segments)
  }

  private fail(what: string): never {
    const at = this.pos >= this.text.length ? 'at end of input' : `at offset ${this.pos}`
    throw new ParseFailure(`invalid JSON ${at}: ${what}`)
  }

  private skipSpace(): number {
    const text = this.text
    let pos = this.pos
    let c = text.charCodeAt(pos)
    while (c === SPACE || c === LF || c === CR || c === TAB) c = text.charCodeAt(++pos)
    this.pos = pos
    return c
  }

  private string(): string {
    const text = this.text
    let pos = this.pos + 1
    let start = pos
    let out = ''
    while (true) {
      const c = text.charCodeAt(pos)
      if (c === QUOTE) {
        this.pos = pos + 1
        return out + text.slice(start, pos)
      }
      if (c === BACKSLASH) {
        out += text.slice(start, pos)
        const e = text.charAt(pos + 1)
        const simple = ESCAPES[e]
        if (simple !== undefined && Object.hasOwn(ESCAPES, e)) {
          out += simple
          pos += 2
        } else if (e === 'u' && /^[0-9a-fA-F]{4}$/.test(text.slice(pos + 2, pos + 6))) {
          out += String.fromCharCode(parseInt(text.slice(pos + 2, pos + 6), 16))
          pos += 6
        } else {
          this.pos = pos
          this.fail('invalid escape sequence in string')
        }
        start = pos
      } else if (c < 0x20 || Number.isNaN(c)) {
        this.pos = pos
        this.fail(Number.isNaN(c) ? 'unterminated string' : 'unescaped control character in string')
      } else {
        pos++
      }
    }
  }

  private number(): number {
    NUMBER_TOKEN.lastIndex = this.pos
    const match = NUMBER_TOKEN.exec(this.text)
    if (match === null) this.fail('invalid number')
    const token = match[0]
    const value = Number(token)
    if (Object.is(value, -0)) throw new ParseFailure(`${where(this.path())}: -0 is not lossless JSON`)
    if (!SAFE_INTEGER_TOKEN.test(token) && !_isLosslessNumberToken(token, value)) {
      throw new ParseFailure(
        `${where(this.path())}: number ${token} does not round-trip through a double (it would become ${value})`,
      )
    }
    this.pos += token.length
    return value
  }

  private literal(word: string, value: JsonValue): JsonValue {
    if (!this.text.startsWith(word, this.pos)) this.fail('unexpected token')
    this.pos += word.length
    return value
  }

  /** Reads an object key and its colon; rejects duplicates. */
  private key(frame: Frame): void {
    if (this.skipSpace() !== QUOTE) this.fail('expected a string key')
    const key = this.string()
    const keys = frame.keys as string[]
    let duplicate: boolean
    if (keys.length < 8) duplicate = keys.includes(key)
    else {
      frame.seen ??= new Set(keys)
      duplicate = frame.seen.has(key)
      frame.seen.add(key)
    }
    if (duplicate) throw new ParseFailure(`${where(this.path(key))}: duplicate key ${JSON.stringify(key)}`)
    keys.push(key)
    if (this.skipSpace() !== 0x3a) this.fail("expected ':'")
    this.pos++
  }

  parse(): JsonValue {
    const text = this.text
    const stack = this.stack
    while (true) {
      // Read one value, or open a container and continue with its first child.
      let value: JsonValue | undefined
      const c = this.skipSpace()
      if (c === 0x7b) {
        this.pos++
        const frame: Frame = { keys: [], values: [], seen: undefined }
        if (this.skipSpace() === 0x7d) {
          this.pos++
          value = _frozenObject([], [])
        } else {
          this.key(frame)
          stack.push(frame)
          continue
        }
      } else if (c === 0x5b) {
        this.pos++
        if (this.skipSpace() === 0x5d) {
          this.pos++
          value = _frozenArray([])
        } else {
          stack.push({ keys: undefined, values: [], seen: undefined })
          continue
        }
      } else if (c === QUOTE) value = this.string()
      else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) value = this.number()
      else if (c === 0x74) value = this.literal('true', true)
      else if (c === 0x66) value = this.literal('false', false)
      else if (c === 0x6e) value = this.literal('null', null)
      else this.fail(Number.isNaN(c) ? 'unexpected end of input' : 'unexpected character')
      // Deliver the value upward, closing containers as their closers arrive.
      while (true) {
        const top = stack[stack.length - 1]
        if (top === undefined) {
          this.skipSpace()
          if (this.pos < text.length) this.fail('unexpected trailing content')
          return value
        }
        top.values.push(value)
        const d = this.skipSpace()
        if (d === 0x2c) {
          this.pos++
          if (top.keys !== undefined) this.key(top)
          break
        }
        if (d === (top.keys === undefined ? 0x5d : 0x7d)) {
          this.pos++
          stack.pop()
          value = top.keys === undefined ? _frozenArray(top.values) : _frozenObject(top.keys, top.values)
          continue
        }
        this.fail(top.keys === undefined ? "expected ',' or ']'" : "expected ',' or '}'")
      }
    }
  }
}

/**
 * Parses raw model argument text losslessly into a fresh deep-frozen value.
 * Strict RFC 8259 JSON, iterative (no depth limit but memory). Rejected with a
 * message (never thrown): syntax errors, number tokens that do not round-trip
 * through a double (`9007199254740993`, `1e400`, `0.10000000000000001`), `-0`,
 * and duplicate object keys (`JSON.parse` would silently keep the last one).
 * `__proto__` is an ordinary key.
 */
export function parseJsonArguments(text: string): ParseJsonResult {
  if (typeof text !== 'string') return { ok: false, message: 'arguments must be a JSON string' }
  try {
    return { ok: true, value: _markMaterialized(new Parser(text).parse()) }
  } catch (thrown) {
    return {
      ok: false,
      message: thrown instanceof ParseFailure ? thrown.message : `invalid JSON: ${describeThrown(thrown)}`,
    }
  }
}
