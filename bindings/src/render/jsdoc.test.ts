import { describe, expect, test } from 'vitest'
import { _compactJson } from './compact-json.js'
import { _commentLines, _jsdoc } from './jsdoc.js'

describe('JSDoc text', () => {
  test('*/ is escaped, so a description cannot close its comment', () => {
    expect(_jsdoc(_commentLines('a */ b'), '')).toBe('/** a *\\/ b */\n')
  })
  test('every line terminator starts a new prefixed line', () => {
    const lines = ['one', 'two', 'three', 'four', 'five', 'six'].map((l) => `   * ${l}\n`).join('')
    expect(_jsdoc(_commentLines('one\ntwo\r\nthree\rfour\u2028five\u2029six'), '  ')).toBe(`  /**\n${lines}   */\n`)
  })
  test('invisible controls and lone surrogates become visible escapes', () => {
    expect(_commentLines('a\u0000b\u202ec\ud800d\u{1f600}')).toEqual(['a\\u{0}b\\u{202e}c\\u{d800}d\u{1f600}'])
  })
  test('blank edges are dropped and an empty text renders nothing', () => {
    expect(_jsdoc(_commentLines('\n\nx\n\n'), '')).toBe('/** x */\n')
    expect(_jsdoc(_commentLines(''), '')).toBe('')
    expect(_jsdoc(_commentLines('a\n\nb'), '')).toBe('/**\n * a\n *\n * b\n */\n')
  })
})

describe('compact annotation JSON', () => {
  test('renders one line of JSON', () => {
    expect(_compactJson({ a: [1, 'x', null, true], b: {} }, 100)).toBe('{"a": [1, "x", null, true], "b": {}}')
  })
  test('stops at the budget, cycles included', () => {
    const cyclic: Record<string, unknown> = {}
    cyclic['self'] = cyclic
    const text = _compactJson(cyclic, 40)
    expect(text?.length).toBeLessThanOrEqual(40)
    expect(text?.endsWith('…')).toBe(true)
  })
  test('non-JSON values are left out', () => {
    expect(_compactJson(() => 1, 10)).toBeUndefined()
    expect(_compactJson([Number.NaN], 10)).toBeUndefined()
    expect(_compactJson(-0, 10)).toBe('0')
  })
  test('any depth renders without recursion', () => {
    let deep: unknown = 1
    for (let i = 0; i < 100_000; i++) deep = [deep]
    expect(_compactJson(deep, 50)).toBe(`${'['.repeat(49)}…`)
  })
})
