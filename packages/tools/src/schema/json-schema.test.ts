import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import { JsonSchemaError, type Violation } from '../errors.js'
import { assertObjectJsonSchema, assertSupportedJsonSchema } from './json-schema.js'

function violations(schema: unknown): Violation[] {
  try {
    assertSupportedJsonSchema(schema)
    return []
  } catch (error) {
    expect(error).toBeInstanceOf(JsonSchemaError)
    return [...(error as JsonSchemaError).violations]
  }
}

function paths(schema: unknown): string[] {
  return violations(schema).map((v) => v.path)
}

describe('assertSupportedJsonSchema', () => {
  test('accepts every form of the subset', () => {
    const schema = {
      type: 'object',
      description: 'root',
      title: 'Root',
      properties: {
        s: { type: 'string', enum: ['a', 'b'], default: 'a', examples: ['a'] },
        n: { type: 'number', const: 1.5 },
        i: { type: 'integer', enum: [1, 2] },
        b: { type: 'boolean', const: true },
        z: { type: 'null', enum: [null] },
        list: { type: 'array', items: { type: 'string' } },
        anyList: { type: 'array' },
        either: { oneOf: [{ type: 'string' }, { type: 'null' }], description: 'annotated' },
        anything: { description: 'annotation-only node' },
        proto: { type: 'string' },
      },
      required: ['s', 'proto'],
      additionalProperties: false,
    }
    // `__proto__` is an ordinary property name (an object literal would set the prototype instead).
    const json = JSON.parse(JSON.stringify(schema).replaceAll('"proto"', '"__proto__"')) as unknown
    expect(violations(json)).toEqual([])
    expect(violations({})).toEqual([])
  })

  test('reports every bad path in one error', () => {
    const bad = {
      type: 'object',
      properties: {
        a: { type: ['string', 'null'] },
        b: { enum: [1, 'a'] },
        c: { type: 'string', enum: [1] },
        d: { type: 'integer', const: 1.5 },
        e: { type: 'string', items: {} },
        f: { oneOf: [{ type: 'string' }] },
        g: { type: 'string', format: 'email' },
        h: { type: 'array', items: [{ type: 'string' }] },
        i: { type: 'object', additionalProperties: { type: 'string' } },
        j: { type: 'date' },
        k: true,
        l: { type: 'string', description: 3 },
        m: { type: 'string', enum: [] },
        n: { type: 'string', enum: ['x'], const: 'x' },
        o: { type: 'object', oneOf: [{}, {}] },
      },
      required: ['zz', 'a', 'a'],
      $schema: 'http://json-schema.org/draft-07/schema#',
    }
    expect(paths(bad)).toEqual([
      '/$schema',
      '/required/0',
      '/required/2',
      '/properties/a/type',
      '/properties/b/enum',
      '/properties/c/enum/0',
      '/properties/d/const',
      '/properties/e/items',
      '/properties/f/oneOf',
      '/properties/g/format',
      '/properties/h/items',
      '/properties/i/additionalProperties',
      '/properties/j/type',
      '/properties/k',
      '/properties/l/description',
      '/properties/m/enum',
      '/properties/n/const',
      '/properties/o/oneOf',
    ])
  })

  test('keywords that need a type are rejected on untyped nodes', () => {
    expect(
      paths({ properties: {}, required: [], additionalProperties: true, items: {}, enum: ['a'], const: 1 }),
    ).toEqual(['/properties', '/required', '/additionalProperties', '/items', '/enum', '/const', '/const'])
  })

  test('the schema itself must be lossless JSON', () => {
    expect(violations({ type: 'string', default: undefined })).toEqual([
      { path: '/default', message: 'undefined is not JSON' },
    ])
    expect(paths({ type: 'number', examples: [NaN] })).toEqual(['/examples/0'])
    expect(paths(null)).toEqual([''])
    expect(paths('string')).toEqual([''])
    const hostile = {
      get type(): string {
        throw new Error('no')
      },
    }
    expect(violations(hostile)[0]?.message).toMatch(/no/)
  })

  test('is total on arbitrary input: it either passes or throws JsonSchemaError', () => {
    fc.assert(
      fc.property(fc.anything({ withBigInt: true, withMap: true, withNullPrototype: true }), (value) => {
        violations(value)
      }),
    )
  })

  test('walks a 100 000-deep schema iteratively', () => {
    let schema: unknown = { type: 'string' }
    for (let i = 0; i < 100_000; i++) schema = { type: 'array', items: schema }
    expect(violations(schema)).toEqual([])
    let bad: unknown = { type: 'strin' }
    for (let i = 0; i < 100_000; i++) bad = { oneOf: [bad, { type: 'null' }] }
    const found = paths(bad)
    expect(found).toHaveLength(1)
    expect(found[0]?.endsWith('/oneOf/0/type')).toBe(true)
  })
})

describe('assertObjectJsonSchema', () => {
  test('accepts an object root', () => {
    expect(() => assertObjectJsonSchema({ type: 'object' })).not.toThrow()
  })

  test('requires type object at the root, alongside every other violation', () => {
    expect(() => assertObjectJsonSchema({ type: 'array' })).toThrow(/\/type: the root schema must be type: 'object'/)
    try {
      assertObjectJsonSchema({ description: 1, foo: 2 })
      expect.unreachable()
    } catch (error) {
      expect((error as JsonSchemaError).violations.map((v) => v.path)).toEqual(['/type', '/foo', '/description'])
      expect((error as JsonSchemaError).code).toBe('INVALID_SCHEMA')
    }
  })
})
