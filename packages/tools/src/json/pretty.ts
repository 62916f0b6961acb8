import type { JsonValue } from './types.js'

/** Room pretty-printing may take beyond 4 x the compact text. */
const PRETTY_SLACK_CHARS = 64 * 1024

/**
 * A JSON value as a model reads it: `JSON.stringify(value, null, 2)`, unless indentation would blow it
 * up past 4 x its compact text + 64 Ki characters (a deeply nested value grows quadratically: 200 000
 * levels fit an output budget compact, not indented); then the compact JSON text. Iterative: a value
 * nested 500 000 levels deep prints instead of overflowing the stack. The default `render` of
 * `defineTool` and the value of a `run_code` result print with it.
 */
export function prettyJson(value: JsonValue): string {
  const compact = compactJson(value)
  return written(value, '  ', compact.length * 4 + PRETTY_SLACK_CHARS) ?? compact
}

/** `JSON.stringify(value)`: the native writer, or the iterative one where the native one overflows the stack. */
function compactJson(value: JsonValue): string {
  try {
    return JSON.stringify(value)
  } catch (error) {
    if (!(error instanceof RangeError)) throw error
    return written(value, '', Number.POSITIVE_INFINITY) ?? 'null'
  }
}

type Frame = { kind: 'array'; items: readonly JsonValue[]; index: number } | { kind: 'object'; entries: [string, JsonValue][]; index: number }

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
