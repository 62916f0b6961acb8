import { describe, expect, test } from 'vitest'
import { prettyJson } from './pretty.js'
import type { JsonValue } from './types.js'

function nested(depth: number): JsonValue {
  let v: JsonValue = []
  for (let i = 0; i < depth; i++) v = [v]
  return v
}

describe('prettyJson', () => {
  test('is JSON.stringify(value, null, 2) for ordinary values', () => {
    const value = { a: [1, 'two', { b: null, c: [] }], d: {}, e: 'x\ny', '': { 'k"': true } }
    expect(prettyJson(value)).toBe(JSON.stringify(value, null, 2))
    expect(prettyJson('s')).toBe('"s"')
    expect(prettyJson(null)).toBe('null')
  })

  test('a deeply nested value whose indentation would grow quadratically prints compact, quickly, without overflowing', () => {
    const deep = nested(200_000)
    // Indented, this text would be about 4e10 characters: more than a string can hold.
    expect(prettyJson(deep)).toBe(`${'['.repeat(200_001)}${']'.repeat(200_001)}`)
    // Moderately nested values still print indented.
    expect(prettyJson(nested(100))).toBe(JSON.stringify(nested(100), null, 2))
  })

  test('indents exactly while the indented text fits 4 x the compact text + 64 Ki characters, and is compact past it', () => {
    // Nested arrays of a few items each: the indented text crosses the bound at about 180 levels.
    let crossed = 0
    for (let depth = 0; depth <= 400; depth += 1) {
      let value: JsonValue = ['leaf', { k: 1, e: {}, a: [] }]
      for (let i = 0; i < depth; i++) value = i % 2 === 0 ? [value, i, 'x'] : { [`k${i}`]: value, n: null }
      const compact = JSON.stringify(value)
      const indented = JSON.stringify(value, null, 2)
      const fits = indented.length <= compact.length * 4 + 64 * 1024
      if (!fits) crossed++
      expect(prettyJson(value)).toBe(fits ? indented : compact)
    }
    expect(crossed).toBeGreaterThan(100)
    // Wide values (a table of rows) indent as the native writer does.
    const rows = Array.from({ length: 2000 }, (_, i) => ({
      id: i,
      name: `row "${i}"`,
      tags: ['a', 'b'],
      empty: [],
      none: {},
      note: null,
    }))
    expect(prettyJson(rows)).toBe(JSON.stringify(rows, null, 2))
  })

  test('compact text past the native writer’s stack is the same text JSON.stringify would give', () => {
    let deep: JsonValue = { leaf: [1, 'a'] }
    let expected = '{"leaf":[1,"a"]}'
    for (let i = 0; i < 200_000; i++) {
      deep = i % 2 === 0 ? { k: deep, n: i } : [deep, null]
      expected = i % 2 === 0 ? `{"k":${expected},"n":${i}}` : `[${expected},null]`
    }
    expect(() => JSON.stringify(deep)).toThrow(RangeError)
    expect(prettyJson(deep)).toBe(expected)
  })
})
