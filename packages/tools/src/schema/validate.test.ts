import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import { JsonSchemaError } from '../errors.js'
import type { JsonSchemaNode } from './json-schema.js'
import { compileJsonSchema, validateJsonSchemaValue } from './validate.js'

const person: JsonSchemaNode = {
  type: 'object',
  properties: {
    name: { type: 'string' },
    age: { type: 'integer' },
    role: { type: 'string', enum: ['admin', 'user'] },
    tags: { type: 'array', items: { type: 'string' } },
    address: {
      type: 'object',
      properties: { city: { type: 'string' } },
      required: ['city'],
      additionalProperties: false,
    },
  },
  required: ['name'],
  additionalProperties: false,
}

describe('validateJsonSchemaValue', () => {
  test('accepts a valid value', () => {
    expect(
      validateJsonSchemaValue(person, {
        name: 'Ada',
        age: 36,
        role: 'admin',
        tags: ['x'],
        address: { city: 'London' },
      }),
    ).toEqual([])
  })

  test('reports every violation with its path, in document order', () => {
    const value = { age: 1.5, role: 'root', tags: ['ok', 3], address: { town: 'x' }, extra: true }
    expect(validateJsonSchemaValue(person, value)).toEqual([
      { path: '/age', message: 'expected integer, got number 1.5' },
      { path: '/role', message: 'must be one of "admin", "user"' },
      { path: '/extra', message: 'is not allowed (additionalProperties: false)' },
      { path: '/name', message: 'is required' },
      { path: '/tags/1', message: 'expected string, got number 3' },
      { path: '/address/town', message: 'is not allowed (additionalProperties: false)' },
      { path: '/address/city', message: 'is required' },
    ])
  })

  test('checks every scalar type and const', () => {
    const cases: Array<[JsonSchemaNode, unknown, boolean]> = [
      [{ type: 'string' }, 'x', true],
      [{ type: 'string' }, 1, false],
      [{ type: 'number' }, 1.5, true],
      [{ type: 'number' }, NaN, false],
      [{ type: 'number' }, Infinity, false],
      [{ type: 'number' }, -0, false],
      [{ type: 'integer' }, 2, true],
      [{ type: 'integer' }, 2.5, false],
      [{ type: 'integer' }, -0, false],
      [{ type: 'boolean' }, false, true],
      [{ type: 'boolean' }, 0, false],
      [{ type: 'null' }, null, true],
      [{ type: 'null' }, undefined, false],
      [{ type: 'string', const: 'a' }, 'a', true],
      [{ type: 'string', const: 'a' }, 'b', false],
      [{ type: 'null', const: null }, null, true],
      [{ type: 'array' }, [1, 'x', { a: null }], true],
      [{ type: 'array' }, [1, undefined], false],
      [{ type: 'array' }, { length: 0 }, false],
      [{ type: 'object' }, [], false],
      [{ type: 'object' }, new Date(), false],
      [{ type: 'object' }, Object.create(null) as unknown, true],
      [{}, { deep: [1, { x: 'y' }] }, true],
      [{}, { deep: [1, { x: 1n }] }, false],
      [{}, () => 1, false],
    ]
    cases.forEach(([schema, value, ok], i) => {
      expect(validateJsonSchemaValue(schema, value).length === 0, `case ${i}`).toBe(ok)
    })
  })

  test('open objects accept extra keys but still require them to be JSON', () => {
    const open: JsonSchemaNode = { type: 'object', properties: { a: { type: 'string' } } }
    expect(validateJsonSchemaValue(open, { a: 'x', b: [1, { c: null }] })).toEqual([])
    expect(validateJsonSchemaValue(open, { a: 'x', b: [1, { c: undefined }] })).toEqual([
      { path: '/b/1/c', message: 'undefined is not JSON' },
    ])
  })

  test('oneOf requires exactly one matching branch', () => {
    const schema: JsonSchemaNode = {
      oneOf: [
        {
          type: 'object',
          properties: { kind: { type: 'string', const: 'a' }, n: { type: 'number' } },
          required: ['kind'],
        },
        { type: 'string' },
        { type: 'number' },
      ],
    }
    expect(validateJsonSchemaValue(schema, 'x')).toEqual([])
    expect(validateJsonSchemaValue(schema, { kind: 'a', n: 1 })).toEqual([])
    expect(validateJsonSchemaValue(schema, true)).toEqual([
      { path: '', message: 'matches none of the oneOf branches (expected object | string | number), got boolean true' },
    ])
    // Only the object branch fits the value's type, so its own violations explain the failure.
    expect(validateJsonSchemaValue(schema, { kind: 'b', n: 'x' })).toEqual([
      { path: '/kind', message: 'must be "a" (in oneOf branch 0)' },
      { path: '/n', message: 'expected number, got string "x" (in oneOf branch 0)' },
    ])
    const overlapping: JsonSchemaNode = { oneOf: [{ type: 'number' }, { type: 'integer' }] }
    expect(validateJsonSchemaValue(overlapping, 1.5)).toEqual([])
    expect(validateJsonSchemaValue(overlapping, 2)).toEqual([
      { path: '', message: 'matches oneOf branches 0, 1; exactly one must match' },
    ])
    const nested: JsonSchemaNode = { oneOf: [{ type: 'array', items: { type: 'string' } }, { type: 'object' }] }
    expect(validateJsonSchemaValue({ type: 'array', items: nested }, [['a'], {}, [1]])).toEqual([
      { path: '/2/0', message: 'expected string, got number 1 (in oneOf branch 0)' },
    ])
    const ambiguous: JsonSchemaNode = {
      oneOf: [{ type: 'object' }, { type: 'object', properties: { a: { type: 'string' } } }],
    }
    expect(validateJsonSchemaValue(ambiguous, { a: 'x' })).toEqual([
      { path: '', message: 'matches oneOf branches 0, 1; exactly one must match' },
    ])
  })

  test('only own enumerable string keys count; __proto__ is an ordinary key', () => {
    const schema: JsonSchemaNode = JSON.parse(
      '{"type":"object","properties":{"__proto__":{"type":"string"}},"required":["__proto__"],"additionalProperties":false}',
    ) as JsonSchemaNode
    expect(validateJsonSchemaValue(schema, JSON.parse('{"__proto__":"x"}'))).toEqual([])
    expect(validateJsonSchemaValue(schema, JSON.parse('{"__proto__":5}'))).toEqual([
      { path: '/__proto__', message: 'expected string, got number 5' },
    ])
    expect(validateJsonSchemaValue(schema, {})).toEqual([{ path: '/__proto__', message: 'is required' }])
    const inherited = Object.create({ name: 'x' }) as object
    expect(validateJsonSchemaValue({ type: 'object' }, inherited)).toHaveLength(1)
    const hidden = {}
    Object.defineProperty(hidden, 'name', { value: 'x', enumerable: false })
    expect(validateJsonSchemaValue(person, hidden)).toEqual([{ path: '/name', message: 'is required' }])
  })

  test('hostile getters and proxies are violations, not throws', () => {
    const getter = {
      get name(): string {
        throw new Error('boom')
      },
    }
    expect(validateJsonSchemaValue(person, getter)).toEqual([{ path: '', message: 'could not be read: boom' }])
    const { proxy, revoke } = Proxy.revocable({}, {})
    revoke()
    expect(validateJsonSchemaValue(person, { address: proxy, name: 'x' })[0]?.path).toBe('/address')
    expect(validateJsonSchemaValue({}, { x: proxy })[0]?.message).toMatch(/revoked/)
  })

  test('is total on arbitrary values and schemas', () => {
    fc.assert(
      fc.property(
        fc.anything({ withBigInt: true, withMap: true, withSparseArray: true, withNullPrototype: true }),
        (value) => {
          expect(Array.isArray(validateJsonSchemaValue(person, value))).toBe(true)
          expect(Array.isArray(validateJsonSchemaValue({}, value))).toBe(true)
          expect(Array.isArray(validateJsonSchemaValue(value as JsonSchemaNode, value))).toBe(true)
        },
      ),
    )
  })

  test('reports an unsupported schema as a root violation', () => {
    expect(validateJsonSchemaValue({ type: 'string', format: 'email' } as JsonSchemaNode, 'x')).toEqual([
      { path: '', message: 'unsupported JSON Schema: /format: unsupported keyword "format"' },
    ])
  })

  test('validates 100 000-deep values and schemas iteratively', () => {
    let value: unknown = 'leaf'
    let schema: JsonSchemaNode = { type: 'string' }
    for (let i = 0; i < 100_000; i++) {
      value = [value]
      schema = { type: 'array', items: schema }
    }
    expect(validateJsonSchemaValue(schema, value)).toEqual([])
    expect(validateJsonSchemaValue({ type: 'array' }, value)).toEqual([])
    expect(validateJsonSchemaValue({}, value)).toEqual([])
    let bad: unknown = 1
    for (let i = 0; i < 100_000; i++) bad = [bad]
    expect(validateJsonSchemaValue(schema, bad)).toHaveLength(1)
  })

  test('rejects cycles under unconstrained nodes instead of looping', () => {
    const cyclic: unknown[] = []
    cyclic.push(cyclic)
    expect(validateJsonSchemaValue({}, { a: cyclic })).toEqual([
      { path: '/a/0', message: 'a cyclic reference is not JSON' },
    ])
  })

  test('caps the number of reported violations', () => {
    const result = validateJsonSchemaValue(
      { type: 'array', items: { type: 'string' } },
      Array.from({ length: 500 }, () => 1),
    )
    expect(result).toHaveLength(101)
    expect(result[100]?.message).toMatch(/omitted/)
  })
})

describe('compileJsonSchema', () => {
  test('compiles once to a frozen checked copy', () => {
    const source: JsonSchemaNode = { type: 'object', properties: { a: { type: 'string' } } }
    const validator = compileJsonSchema(source)
    expect(validator.schema).toEqual(source)
    expect(validator.schema).not.toBe(source)
    expect(Object.isFrozen(validator.schema)).toBe(true)
    // Later mutation of the source does not change the compiled validator.
    ;(source.properties as Record<string, JsonSchemaNode>)['a'] = { type: 'number' }
    expect(validator.validate({ a: 'x' })).toEqual([])
  })

  test('throws JsonSchemaError for an unsupported schema', () => {
    expect(() => compileJsonSchema({ type: 'string', pattern: 'x' } as JsonSchemaNode)).toThrow(JsonSchemaError)
  })

  test('a compiled validator gives the same answers on every reuse (its cost is part of every call in bench/pipeline)', () => {
    const validator = compileJsonSchema({
      type: 'object',
      properties: {
        a: { type: 'string' },
        b: { type: 'number' },
        c: { type: 'boolean' },
        d: { type: 'integer' },
        e: { type: 'string', enum: ['x', 'y'] },
      },
      required: ['a', 'b'],
      additionalProperties: false,
    })
    const good = { a: 'hello', b: 1.5, c: true, d: 4, e: 'x' }
    const bad = { a: 'hello', b: 1.5, d: 4.5, e: 'z', f: 1 }
    const firstBad = validator.validate(bad)
    expect(firstBad.length).toBeGreaterThanOrEqual(3)
    for (let i = 0; i < 10_000; i++) {
      expect(validator.validate(good)).toEqual([])
      if (i % 1000 === 0) expect(validator.validate(bad)).toEqual(firstBad)
    }
  })
})
