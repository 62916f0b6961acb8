import { describe, expect, test } from 'vitest'
import type { JsonValue } from '@ptc/tools'
import { prettyJson, renderRunText } from './render.js'

function nested(depth: number): JsonValue {
  let v: JsonValue = []
  for (let i = 0; i < depth; i++) v = [v]
  return v
}

describe('prettyJson', () => {
  test('is JSON.stringify(value, null, 2) for ordinary values', () => {
    const value = { a: [1, 'two', { b: null, c: [] }], d: {}, e: 'x\ny' }
    expect(prettyJson(value)).toBe(JSON.stringify(value, null, 2))
    expect(prettyJson('s')).toBe('"s"')
  })

  test('a deeply nested value whose indentation would grow quadratically prints compact, quickly, without overflowing', () => {
    const deep = nested(200_000)
    // Indented, this text would be about 4e10 characters: more than a string can hold.
    expect(prettyJson(deep)).toBe(`${'['.repeat(200_001)}${']'.repeat(200_001)}`)
    // Moderately nested values still print indented.
    expect(prettyJson(nested(100))).toBe(JSON.stringify(nested(100), null, 2))
  })

  test('renderRunText puts the logs, then the value', () => {
    expect(renderRunText(['a', 'b'], { x: 1 })).toBe('a\nb\n{\n  "x": 1\n}')
    expect(renderRunText([], undefined)).toBe('(run_code completed with no output)')
  })
})
