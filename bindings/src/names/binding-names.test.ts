import { describe, expect, test } from 'vitest'
import { BindingNameError } from '../errors.js'
import { assertValidBindingNames, bindingKey, isIdentifierName, validateBindingNames } from './binding-names.js'

describe('isIdentifierName', () => {
  test('ASCII identifiers, reserved words included, are identifier names', () => {
    for (const name of ['get_stock', '$x', '_', 'a1', 'class', 'delete', 'await', '__proto__'])
      expect(isIdentifierName(name)).toBe(true)
  })
  test('dotted, dashed, numeric, empty and non-ASCII names are not', () => {
    for (const name of ['github.create_issue', 'get-stock', '1a', '', 'a b', 'ñame', 'a\u2028'])
      expect(isIdentifierName(name)).toBe(false)
  })
})

describe('bindingKey', () => {
  test('identifiers stay bare, reserved words included', () => {
    expect(bindingKey('get_stock')).toBe('get_stock')
    expect(bindingKey('class')).toBe('class')
  })
  test('other names are JSON-quoted, with line separators escaped', () => {
    expect(bindingKey('github.create_issue')).toBe('"github.create_issue"')
    expect(bindingKey('a"b\\c')).toBe('"a\\"b\\\\c"')
    expect(bindingKey('x\u2028y\u2029')).toBe('"x\\u2028y\\u2029"')
    expect(bindingKey('\ud800')).toBe('"\\ud800"')
  })
  test('__proto__ is quoted so it reads as an ordinary key', () => {
    expect(bindingKey('__proto__')).toBe('"__proto__"')
  })
})

describe('validateBindingNames', () => {
  test('accepts any distinct non-empty names but run_code', () => {
    expect(validateBindingNames(['a', 'github.create_issue', '__proto__', 'class', ' '])).toEqual([])
  })
  test('reports every problem with its index', () => {
    const problems = validateBindingNames(['a', '', 'run_code', 'a', 7, 'a'])
    expect(problems.map((p) => [p.index, p.name])).toEqual([
      [1, ''],
      [2, 'run_code'],
      [3, 'a'],
      [4, 'number'],
      [5, 'a'],
    ])
    expect(problems[1]?.message).toMatch(/reserved/)
    expect(problems[2]?.message).toBe('duplicate binding name "a"')
  })
  test('is total on hostile input', () => {
    expect(validateBindingNames('nope' as unknown as string[])).toHaveLength(1)
    const hostile = new Proxy(['a'], {
      get: () => {
        throw new Error('boom')
      },
    })
    expect(() => validateBindingNames(hostile)).not.toThrow()
  })
  test('the asserting variant throws one error listing all problems', () => {
    expect(() => assertValidBindingNames(['ok'])).not.toThrow()
    let error: unknown
    try {
      assertValidBindingNames(['', 'run_code'])
    } catch (e) {
      error = e
    }
    expect(error).toBeInstanceOf(BindingNameError)
    expect((error as BindingNameError).code).toBe('INVALID_BINDING_NAMES')
    expect((error as BindingNameError).problems).toHaveLength(2)
    expect((error as BindingNameError).message).toMatch(/\[0\].*empty.*\[1\].*reserved/)
  })
})
