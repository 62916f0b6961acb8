import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import { parseJsonArguments } from './parse.js'
import type { JsonValue } from './types.js'

function parsed(text: string): JsonValue {
  const result = parseJsonArguments(text)
  if (!result.ok) throw new Error(result.message)
  return result.value
}

function failure(text: string): string {
  const result = parseJsonArguments(text)
  if (result.ok) throw new Error(`expected ${text} to be rejected`)
  return result.message
}

describe('parseJsonArguments', () => {
  test('parses JSON into a deep-frozen value', () => {
    const value = parsed(' {"a": [1, -2.5e3, "x\\n\\u00e9\\ud83d\\ude00", true, false, null], "b": {}} ')
    expect(value).toEqual({ a: [1, -2500, 'x\né😀', true, false, null], b: {} })
    expect(Object.isFrozen(value)).toBe(true)
    expect(Object.isFrozen((value as { a: unknown }).a)).toBe(true)
  })

  test('agrees with JSON.parse on arbitrary lossless JSON text', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.boolean(), (value, pretty) => {
        const text = JSON.stringify(value, null, pretty ? 2 : undefined)
        expect(parsed(text)).toStrictEqual(JSON.parse(text))
      }),
    )
  })

  test('is total on arbitrary strings', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.json()), (text) => {
        const result = parseJsonArguments(text)
        expect(typeof result.ok).toBe('boolean')
        if (result.ok) {
          // Whatever parses must be accepted by JSON.parse too.
          expect(() => JSON.parse(text) as unknown).not.toThrow()
        }
      }),
    )
    expect(parseJsonArguments(42 as unknown as string).ok).toBe(false)
  })

  test('rejects integers above 2^53 that do not round-trip', () => {
    expect(parsed('9007199254740992')).toBe(2 ** 53)
    expect(failure('9007199254740993')).toMatch(/9007199254740993 does not round-trip/)
    expect(failure('{"id": [12345678901234567890]}')).toMatch(/^\/id\/0: number 12345678901234567890/)
    expect(parsed('-9007199254740991')).toBe(-(2 ** 53 - 1))
  })

  test('rejects numbers that overflow, underflow or lose digits; accepts equivalent spellings', () => {
    expect(failure('1e400')).toMatch(/round-trip/)
    expect(failure('-1e400')).toMatch(/round-trip/)
    expect(failure('1e-400')).toMatch(/round-trip/)
    expect(failure('0.10000000000000001')).toMatch(/round-trip/)
    expect(parsed('[0.1, 1.0, 1E2, 1e+2, 25e-1, 0.30000000000000004, 5e-324, 1.7976931348623157e308, 0e999]')).toEqual([
      0.1, 1, 100, 100, 2.5, 0.30000000000000004, 5e-324, 1.7976931348623157e308, 0,
    ])
  })

  test('rejects -0 in every spelling', () => {
    for (const text of ['-0', '-0.0', '-0e5', '[-0]']) expect(failure(text)).toMatch(/-0 is not lossless/)
  })

  test('rejects duplicate keys (JSON.parse would keep the last one)', () => {
    expect(failure('{"a": 1, "a": 2}')).toMatch(/^\/a: duplicate key "a"/)
    const many = Array.from({ length: 20 }, (_, i) => `"k${i}": ${i}`).join(',')
    expect(failure(`{"x": {${many}, "k7": 0}}`)).toMatch(/^\/x\/k7: duplicate/)
    expect(parsed('[{"a": 1}, {"a": 2}]')).toEqual([{ a: 1 }, { a: 2 }])
  })

  test('treats __proto__ as an ordinary own key', () => {
    const value = parsed('{"__proto__": {"polluted": true}}') as Record<string, unknown>
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype)
    expect(Object.hasOwn(value, '__proto__')).toBe(true)
    expect(value['__proto__']).toEqual({ polluted: true })
    expect(failure('{"__proto__": 1, "__proto__": 2}')).toMatch(/duplicate/)
  })

  test.each([
    ['', /end of input/],
    ['   ', /end of input/],
    ['{', /end of input/],
    ['[1,]', /offset 3/],
    ['{"a" 1}', /expected ':'/],
    ['{"a": 1,}', /expected a string key/],
    ['{a: 1}', /expected a string key/],
    ['[1 2]', /expected ',' or ']'/],
    ['01', /trailing/],
    ['1.', /trailing/],
    ['.5', /unexpected character/],
    ['+1', /unexpected character/],
    ['tru', /unexpected token/],
    ['"abc', /unterminated/],
    ['"a\tb"', /control character/],
    ['"\\x"', /escape/],
    ['"\\u12"', /escape/],
    ['[1] [2]', /trailing/],
    ['\uFEFF1', /unexpected character/],
    ['NaN', /unexpected character/],
  ])('rejects malformed input %j', (text, message) => {
    expect(failure(text)).toMatch(message)
  })

  test('parses 100 000-deep nesting without overflowing the stack', () => {
    const depth = 100_000
    const value = parsed('['.repeat(depth) + '1' + ']'.repeat(depth))
    let at: JsonValue = value
    for (let i = 0; i < depth; i++) at = (at as JsonValue[])[0] as JsonValue
    expect(at).toBe(1)
    expect(parsed('{"a":'.repeat(depth) + 'null' + '}'.repeat(depth))).toBeTypeOf('object')
    expect(failure('['.repeat(depth))).toMatch(/end of input/)
  })
})
