import { assertObjectJsonSchema } from '../json-schema.js'
import { describe, expect, test } from 'vitest'
import { convertJsonSchema, convertObjectJsonSchema } from './convert.js'

const keywords = (source: unknown): string[] =>
  convertJsonSchema(source).warnings.map((w) => `${w.path}:${w.keyword ?? ''}`)

describe('convertJsonSchema', () => {
  test('keeps annotations and drops constraints the subset cannot express, naming each keyword and path', () => {
    const { schema, warnings } = convertJsonSchema({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      description: 'd',
      properties: {
        path: { type: 'string', title: 'Path', minLength: 1, format: 'uri', default: '/', examples: ['/a'] },
        n: { type: 'integer', minimum: 0 },
      },
      required: ['path'],
    })
    expect(schema).toEqual({
      type: 'object',
      description: 'd',
      properties: { path: { type: 'string', title: 'Path', default: '/', examples: ['/a'] }, n: { type: 'integer' } },
      required: ['path'],
    })
    expect(warnings.map((w) => `${w.path}:${w.keyword}`)).toEqual([
      '/properties/path/minLength:minLength',
      '/properties/path/format:format',
      '/properties/n/minimum:minimum',
    ])
  })

  test('type arrays and nullable become oneOf; number absorbs integer', () => {
    expect(convertJsonSchema({ type: ['string', 'null'] }).schema).toEqual({
      oneOf: [{ type: 'string' }, { type: 'null' }],
    })
    expect(convertJsonSchema({ type: 'string', nullable: true }).schema).toEqual({
      oneOf: [{ type: 'string' }, { type: 'null' }],
    })
    expect(convertJsonSchema({ type: ['integer', 'number'] }).schema).toEqual({ type: 'number' })
  })

  test('local $ref and $defs are inlined; a cycle becomes unconstrained with a warning', () => {
    const { schema, warnings } = convertJsonSchema({
      $defs: { n: { type: 'object', properties: { next: { $ref: '#/$defs/n' } } } },
      $ref: '#/$defs/n',
    })
    expect(schema).toEqual({ type: 'object', properties: { next: {} } })
    expect(warnings[0]?.message).toMatch(/recursive reference/)
    expect(keywords({ $ref: 'https://example.com/s.json' })).toEqual(['/$ref:$ref'])
  })

  test('anyOf stays oneOf only when branches are disjoint by type or discriminator', () => {
    expect(convertJsonSchema({ anyOf: [{ type: 'string' }, { type: 'number' }] }).schema).toEqual({
      oneOf: [{ type: 'string' }, { type: 'number' }],
    })
    const tagged = {
      anyOf: ['a', 'b'].map((k) => ({ type: 'object', properties: { kind: { const: k } }, required: ['kind'] })),
    }
    expect(convertJsonSchema(tagged).schema.oneOf).toHaveLength(2)
    const overlapping = convertJsonSchema({
      anyOf: [
        { type: 'string', maxLength: 3 },
        { type: 'string', pattern: 'x' },
      ],
    })
    expect(overlapping.schema).toEqual({})
    expect(overlapping.warnings.map((w) => w.keyword)).toContain('anyOf')
  })

  test('additionalProperties schemas become true; allOf of objects is merged; false becomes {} with a warning', () => {
    expect(convertJsonSchema({ type: 'object', additionalProperties: { type: 'string' } }).schema).toEqual({
      type: 'object',
      additionalProperties: true,
    })
    expect(
      convertJsonSchema({
        allOf: [
          { type: 'object', properties: { a: { type: 'string' } } },
          { type: 'object', properties: { b: {} }, required: ['b'] },
        ],
      }).schema,
    ).toEqual({
      type: 'object',
      properties: { a: { type: 'string' }, b: {} },
      required: ['b'],
    })
    expect(convertJsonSchema(false)).toMatchObject({ schema: {}, warnings: [{ path: '' }] })
  })

  test('is total and bounded: hostile input, deep nesting and a $ref explosion never throw', () => {
    let deep: unknown = { type: 'string' }
    for (let i = 0; i < 10_000; i++) deep = { type: 'array', items: deep }
    expect(() => convertJsonSchema(deep)).not.toThrow()
    const defs: Record<string, unknown> = { d0: { type: 'string' } }
    for (let i = 1; i < 40; i++)
      defs[`d${i}`] = {
        type: 'object',
        properties: { a: { $ref: `#/$defs/d${i - 1}` }, b: { $ref: `#/$defs/d${i - 1}` } },
      }
    expect(
      convertJsonSchema({ $defs: defs, $ref: '#/$defs/d39' }).warnings.some((w) =>
        /larger than|deeper than/.test(w.message),
      ),
    ).toBe(true)
    const hostile = Object.defineProperty({}, 'type', {
      enumerable: true,
      get: () => {
        throw new Error('boom')
      },
    })
    expect(convertJsonSchema(hostile).schema).toEqual({})
  })
})

describe('convertObjectJsonSchema', () => {
  test('a tool input root must be an object; a scalar or impossible root is unusable', () => {
    const ok = convertObjectJsonSchema({ type: 'object', properties: { a: { type: 'string' } } })
    expect(ok.ok).toBe(true)
    if (ok.ok) assertObjectJsonSchema(ok.schema)
    expect(convertObjectJsonSchema({ type: 'string' })).toMatchObject({ ok: false })
    expect(convertObjectJsonSchema({ type: 'object', allOf: [{ type: 'string' }] })).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/no arguments/),
    })
    expect(
      convertObjectJsonSchema({
        oneOf: [
          { type: 'object', required: ['a'], properties: { a: { const: 1 } } },
          { type: 'object', required: ['a'], properties: { a: { const: 2 } } },
        ],
      }),
    ).toMatchObject({
      ok: true,
      schema: { type: 'object' },
    })
  })
})
