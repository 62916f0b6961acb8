import type { JsonValue } from './types.js'

/** Room pretty-printing may take beyond 4 x the compact text. */
const PRETTY_SLACK_CHARS = 64 * 1024

/** V8's longest string (2^29 - 24 UTF-16 units): no text is written past it. */
const MAX_STRING_CHARS = 2 ** 29 - 24

/** Nesting up to which the native writer indents (its recursion is safe far deeper; beyond, the iterative one). */
const NATIVE_DEPTH = 512

/**
 * A JSON value as a model reads it: `JSON.stringify(value, null, 2)`, unless indentation would blow it
 * up past 4 x its compact text + 64 Ki characters (a deeply nested value grows quadratically: 200 000
 * levels fit an output budget compact, not indented); then the compact JSON text. A value nested 500 000
 * levels deep prints instead of overflowing the stack. The default `render` of `defineTool` and the value
 * of a `run_code` result print with it.
 *
 * The indented length is counted first (`indentation`, no text written), and the native writer writes it:
 * writing it piece by piece in JavaScript took 20-30 times as long (2.1-2.5 s of the host thread for a
 * 100 000-row tool result, against 80-210 ms).
 */
export function prettyJson(value: JsonValue): string {
  const compact = compactJson(value)
  const maxChars = Math.min(compact.length * 4 + PRETTY_SLACK_CHARS, MAX_STRING_CHARS)
  const extra = indentation(value, maxChars - compact.length)
  // Nothing to indent (a scalar, an empty container): the compact text is the indented one.
  if (extra === 'too-long' || extra === 0) return compact
  if (extra === 'too-deep') return written(value, '  ', maxChars) ?? compact
  return JSON.stringify(value, null, 2)
}

/**
 * How many characters indenting by two spaces adds to the compact text of `value` (a line break and the
 * indentation before each item and closing bracket, a space after each colon); `too-long` as soon as that
 * passes `maxExtra`, `too-deep` past `NATIVE_DEPTH` levels.
 */
function indentation(value: JsonValue, maxExtra: number): number | 'too-long' | 'too-deep' {
  let extra = 0
  const containers: JsonValue[] = [value]
  const depths: number[] = [0]
  while (containers.length > 0) {
    const v = containers.pop()
    const depth = depths.pop() as number
    if (typeof v !== 'object' || v === null) continue
    if (depth >= NATIVE_DEPTH) return 'too-deep'
    let items = 0
    const inner = (item: JsonValue | undefined): void => {
      items++
      if (typeof item === 'object' && item !== null) {
        containers.push(item)
        depths.push(depth + 1)
      }
    }
    if (Array.isArray(v)) for (const item of v) inner(item)
    // for-in, not Object.values: 3x faster on an object of 300 000 keys, and on small ones (its key cache). A
    // JSON value's objects have no enumerable inherited keys.
    else for (const key in v) inner(v[key])
    if (items === 0) continue
    // Each item: a line break and its indentation (and, in an object, the space after its colon); then the
    // closing bracket's line break and indentation.
    extra += items * (1 + 2 * (depth + 1) + (Array.isArray(v) ? 0 : 1)) + 1 + 2 * depth
    if (extra > maxExtra) return 'too-long'
  }
  return extra
}

/** `JSON.stringify(value)`: the native writer, or the iterative one where the native one overflows the stack. */
function compactJson(value: JsonValue): string {
  try {
    return JSON.stringify(value)
  } catch (error) {
    if (!(error instanceof RangeError)) throw error
    // Too deep for the native writer (a RangeError too when too long: a snapshot never lets one that long through).
    const text = written(value, '', MAX_STRING_CHARS)
    if (text === undefined) throw error
    return text
  }
}

type Frame =
  | { kind: 'array'; items: readonly JsonValue[]; index: number }
  | { kind: 'object'; entries: [string, JsonValue][]; index: number }

/**
 * `JSON.stringify(value, null, step)` without recursion (`step` `''`: compact), or undefined once the
 * text passes `maxChars` (it stops writing there).
 */
function written(value: JsonValue, step: string, maxChars: number): string | undefined {
  const newline = step === '' ? '' : '\n'
  const colon = step === '' ? ':' : ': '
  const out: string[] = []
  const stack: Frame[] = []
  let chars = 0
  const push = (piece: string): void => {
    chars += piece.length
    out.push(piece)
  }
  const indent = (): string => (step === '' ? '' : step.repeat(stack.length))
  const open = (v: JsonValue): void => {
    if (Array.isArray(v)) {
      if (v.length === 0) return void push('[]')
      push('[')
      stack.push({ kind: 'array', items: v, index: 0 })
    } else if (typeof v === 'object' && v !== null) {
      const entries = Object.entries(v)
      if (entries.length === 0) return void push('{}')
      push('{')
      stack.push({ kind: 'object', entries, index: 0 })
    } else push(JSON.stringify(v))
  }
  open(value)
  while (stack.length > 0) {
    if (chars > maxChars) return undefined
    const frame = stack[stack.length - 1] as Frame
    const length = frame.kind === 'array' ? frame.items.length : frame.entries.length
    if (frame.index === length) {
      stack.pop()
      push(`${newline}${indent()}${frame.kind === 'array' ? ']' : '}'}`)
      continue
    }
    push(frame.index === 0 ? newline : `,${newline}`)
    const i = frame.index++
    push(indent())
    if (frame.kind === 'array') open(frame.items[i] as JsonValue)
    else {
      const [key, item] = frame.entries[i] as [string, JsonValue]
      push(`${JSON.stringify(key)}${colon}`)
      open(item)
    }
  }
  return chars > maxChars ? undefined : out.join('')
}
