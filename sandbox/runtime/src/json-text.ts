/**
 * `JSON.stringify` for a host result, without overflowing the stack: V8's stringify recurses, so a
 * 100 000-deep (valid) tool result would throw `RangeError`. The fast path is the native one; only
 * when it overflows does an iterative writer with the same output for plain JSON values take over
 * (`undefined`, functions and symbols are dropped from objects and become `null` in arrays; a BigInt
 * or a cycle throws `TypeError`; `toJSON` is not consulted on that path).
 */
export function jsonText(value: unknown): string | undefined {
  try {
    return JSON.stringify(value)
  } catch (error) {
    if (!(error instanceof RangeError)) throw error
    return iterativeJsonText(value)
  }
}

type Frame = { readonly node: object; readonly keys: readonly string[] | undefined; index: number; wrote: boolean }

function scalar(value: unknown): string | undefined {
  if (value === null) return 'null'
  switch (typeof value) {
    case 'string':
    case 'number':
    case 'boolean':
      return JSON.stringify(value)
    case 'bigint':
      throw new TypeError('Do not know how to serialize a BigInt')
    default:
      return undefined
  }
}

export function iterativeJsonText(root: unknown): string | undefined {
  const out: string[] = []
  const stack: Frame[] = []
  const onStack = new Set<object>()
  /** Writes a scalar or opens a container; false when the value is skipped (undefined-like). */
  const open = (value: unknown): boolean => {
    if (value !== null && typeof value === 'object') {
      if (onStack.has(value)) throw new TypeError('Converting circular structure to JSON')
      onStack.add(value)
      const isArray = Array.isArray(value)
      stack.push({ node: value, keys: isArray ? undefined : Object.keys(value), index: 0, wrote: false })
      out.push(isArray ? '[' : '{')
      return true
    }
    const text = scalar(value)
    if (text === undefined) return false
    out.push(text)
    return true
  }
  if (!open(root)) return undefined
  while (stack.length > 0) {
    const frame = stack[stack.length - 1] as Frame
    if (frame.keys === undefined) {
      const array = frame.node as unknown[]
      if (frame.index >= array.length) {
        out.push(']')
        onStack.delete(frame.node)
        stack.pop()
        continue
      }
      if (frame.index++ > 0) out.push(',')
      if (!open(array[frame.index - 1])) out.push('null')
    } else {
      if (frame.index >= frame.keys.length) {
        out.push('}')
        onStack.delete(frame.node)
        stack.pop()
        continue
      }
      const key = frame.keys[frame.index++] as string
      const child = (frame.node as Record<string, unknown>)[key]
      if (scalar(child) === undefined && (child === null || typeof child !== 'object')) continue
      out.push(`${frame.wrote ? ',' : ''}${JSON.stringify(key)}:`)
      frame.wrote = true
      open(child)
    }
  }
  return out.join('')
}
