import type { JsonValue } from '@ptc/tools'

/** The text the model gets for a completed run: the logs, then the value, or a fixed marker. */
export function renderRunText(logs: readonly string[], result: JsonValue | undefined): string {
  const parts = [...logs]
  if (result !== undefined) parts.push(typeof result === 'string' ? result : prettyJson(result))
  return parts.length === 0 ? '(run_code completed with no output)' : parts.join('\n')
}

type Frame = { kind: 'array'; items: readonly JsonValue[]; index: number } | { kind: 'object'; entries: [string, JsonValue][]; index: number }

/**
 * `JSON.stringify(value, null, 2)` without recursion: a value nested 500 000
 * levels deep (it fits in the output budget) prints instead of overflowing.
 */
export function prettyJson(value: JsonValue): string {
  const out: string[] = []
  const stack: Frame[] = []
  const indent = (): string => '  '.repeat(stack.length)
  const open = (v: JsonValue): void => {
    if (Array.isArray(v)) {
      if (v.length === 0) return void out.push('[]')
      out.push('[')
      stack.push({ kind: 'array', items: v, index: 0 })
    } else if (typeof v === 'object' && v !== null) {
      const entries = Object.entries(v)
      if (entries.length === 0) return void out.push('{}')
      out.push('{')
      stack.push({ kind: 'object', entries, index: 0 })
    } else out.push(JSON.stringify(v))
  }
  open(value)
  while (stack.length > 0) {
    const frame = stack[stack.length - 1] as Frame
    const length = frame.kind === 'array' ? frame.items.length : frame.entries.length
    if (frame.index === length) {
      stack.pop()
      out.push(`\n${indent()}${frame.kind === 'array' ? ']' : '}'}`)
      continue
    }
    out.push(frame.index === 0 ? '\n' : ',\n')
    const i = frame.index++
    out.push(indent())
    if (frame.kind === 'array') open(frame.items[i] as JsonValue)
    else {
      const [key, item] = frame.entries[i] as [string, JsonValue]
      out.push(`${JSON.stringify(key)}: `)
      open(item)
    }
  }
  return out.join('')
}
