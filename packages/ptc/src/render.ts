import { jsonText } from '@ptc/sandbox'
import type { JsonValue } from '@ptc/tools'

/** The text the model gets for a completed run: the logs, then the value, or a fixed marker. */
export function renderRunText(logs: readonly string[], result: JsonValue | undefined): string {
  const parts = [...logs]
  if (result !== undefined) parts.push(typeof result === 'string' ? result : prettyJson(result))
  return parts.length === 0 ? '(run_code completed with no output)' : parts.join('\n')
}

/** Room pretty-printing may take beyond 4 x the compact text. */
const PRETTY_SLACK_CHARS = 64 * 1024

/**
 * A value as a model reads it: `JSON.stringify(value, null, 2)`, unless indentation would blow it up
 * past 4 x its compact text + 64 Ki characters (a deeply nested value grows quadratically: 200 000
 * levels fit the output budget compact, not indented); then the compact JSON text. Iterative: a value
 * nested 500 000 levels deep prints instead of overflowing the stack.
 */
export function prettyJson(value: JsonValue): string {
  const compact = jsonText(value) ?? 'null'
  return indented(value, compact.length * 4 + PRETTY_SLACK_CHARS) ?? compact
}

type Frame = { kind: 'array'; items: readonly JsonValue[]; index: number } | { kind: 'object'; entries: [string, JsonValue][]; index: number }

/** `JSON.stringify(value, null, 2)` without recursion, or undefined once the text passes `maxChars` (it stops writing there). */
function indented(value: JsonValue, maxChars: number): string | undefined {
  const out: string[] = []
  const stack: Frame[] = []
  let chars = 0
  const push = (piece: string): void => {
    chars += piece.length
    out.push(piece)
  }
  const indent = (): string => '  '.repeat(stack.length)
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
      push(`\n${indent()}${frame.kind === 'array' ? ']' : '}'}`)
      continue
    }
    push(frame.index === 0 ? '\n' : ',\n')
    const i = frame.index++
    push(indent())
    if (frame.kind === 'array') open(frame.items[i] as JsonValue)
    else {
      const [key, item] = frame.entries[i] as [string, JsonValue]
      push(`${JSON.stringify(key)}: `)
      open(item)
    }
  }
  return chars > maxChars ? undefined : out.join('')
}
