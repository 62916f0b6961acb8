import { _quote } from '../names/binding-names.js'
import { _asArray, _asRecord, _at, _keys, _length, _own } from './_safe.js'

type Step = { value: unknown } | { text: string }

/**
 * Compact one-line JSON for an annotation (`default`, `examples`), at most `budget` characters
 * (longer text ends in `…`). Iterative, so any depth is fine; cycles and huge values stop at the
 * budget. `undefined` when the value is not JSON (a function, a non-finite number, …): the
 * annotation is then left out. Internal.
 */
export function _compactJson(root: unknown, budget: number): string | undefined {
  let out = ''
  const stack: Step[] = [{ value: root }]
  while (stack.length > 0) {
    if (out.length > budget) return `${out.slice(0, Math.max(0, budget - 1))}…`
    const step = stack.pop() as Step
    if ('text' in step) {
      out += step.text
      continue
    }
    const value = step.value
    if (value === null) out += 'null'
    else if (typeof value === 'boolean') out += String(value)
    else if (typeof value === 'number') {
      if (!Number.isFinite(value)) return undefined
      out += Object.is(value, -0) ? '0' : String(value)
    } else if (typeof value === 'string') out += _quote(value)
    else {
      const array = _asArray(value)
      const record = array === undefined ? _asRecord(value) : undefined
      const steps: Step[] = []
      if (array !== undefined) {
        const n = _length(array)
        steps.push({ text: '[' })
        for (let i = 0; i < n && i <= budget; i++) {
          if (i > 0) steps.push({ text: ', ' })
          steps.push({ value: _at(array, i) })
        }
        steps.push({ text: ']' })
      } else if (record !== undefined) {
        const keys = _keys(record)
        if (keys === undefined) return undefined
        steps.push({ text: '{' })
        for (let i = 0; i < keys.length && i <= budget; i++) {
          const key = keys[i] as string
          steps.push({ text: `${i > 0 ? ', ' : ''}${_quote(key)}: ` }, { value: _own(record, key) })
        }
        steps.push({ text: '}' })
      } else return undefined
      for (let i = steps.length - 1; i >= 0; i--) stack.push(steps[i] as Step)
    }
  }
  return out.length > budget ? `${out.slice(0, Math.max(0, budget - 1))}…` : out
}
