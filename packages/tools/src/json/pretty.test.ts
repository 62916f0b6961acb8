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
