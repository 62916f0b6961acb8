import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import { iterativeJsonText, jsonText } from './json-text.js'

describe('JSON text of host results', () => {
  test('the iterative writer matches JSON.stringify on JSON values', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(iterativeJsonText(value)).toBe(JSON.stringify(value))
      }),
    )
  })

  test('undefined-like members are dropped from objects and null in arrays, as JSON.stringify does', () => {
    const value = { a: undefined, b: () => 1, c: [undefined, Symbol('s'), 1], d: null, e: 'é"\n' }
    expect(iterativeJsonText(value)).toBe(JSON.stringify(value))
    expect(iterativeJsonText(undefined)).toBeUndefined()
  })

  test('a 100 000-deep result does not overflow the stack', () => {
    let deep: unknown = []
    for (let i = 0; i < 100_000; i++) deep = [deep]
    const text = jsonText({ deep })
    expect(text?.length).toBe(100_001 * 2 + '{"deep":}'.length)
    expect(text?.startsWith('{"deep":[[[')).toBe(true)
  })

  test('cycles and BigInts throw TypeError', () => {
    const cyc: Record<string, unknown> = {}
    cyc['self'] = cyc
    expect(() => iterativeJsonText(cyc)).toThrow(TypeError)
    expect(() => iterativeJsonText([1n])).toThrow(TypeError)
  })
})
