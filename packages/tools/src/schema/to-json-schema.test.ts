import { describe, expect, test } from 'vitest'
import { JsonSchemaError } from '../errors.js'
import type { ParameterSchemaSpec, ValueSchemaSpec } from './dsl.js'
import { parameterSchemaSpecToJsonSchema, valueSchemaSpecToJsonSchema } from './to-json-schema.js'

function specPaths(compile: () => unknown): string[] {
  try {
    compile()
    return []
  } catch (error) {
    expect(error).toBeInstanceOf(JsonSchemaError)
    expect((error as JsonSchemaError).message).toMatch(/^invalid schema spec: /)
    return (error as JsonSchemaError).violations.map((v) => v.path)
  }
}

describe('valueSchemaSpecToJsonSchema', () => {
  test('compiles every form to the raw subset', () => {
    const spec: ValueSchemaSpec = {
      type: 'object',
      additionalProperties: false,
      description: 'a result',
      properties: {
        id: { type: 'string', required: true, enum: ['a', 'b'] },
        count: { type: 'integer', const: 3 },
        items: { type: 'array', items: { oneOf: [{ type: 'null' }, { type: 'number', title: 'n' }] } },
        payload: { type: 'json', description: 'anything', default: { x: [1] }, examples: [1, 'a'] },
        flag: { type: 'boolean' },
        nothing: { type: 'null' },
        open: { type: 'object', additionalProperties: true },
      },
    }
    const schema = valueSchemaSpecToJsonSchema(spec)
    expect(schema).toEqual({
      type: 'object',
      description: 'a result',
      properties: {
        id: { type: 'string', enum: ['a', 'b'] },
        count: { type: 'integer', const: 3 },
        items: { type: 'array', items: { oneOf: [{ type: 'null' }, { type: 'number', title: 'n' }] } },
        payload: { description: 'anything', default: { x: [1] }, examples: [1, 'a'] },
        flag: { type: 'boolean' },
        nothing: { type: 'null' },
        open: { type: 'object', additionalProperties: true },
      },
      required: ['id'],
      additionalProperties: false,
    })
    expect(Object.isFrozen(schema)).toBe(true)
    expect(Object.isFrozen(schema.properties)).toBe(true)
  })

  test('compiles scalar and array roots', () => {
    expect(valueSchemaSpecToJsonSchema({ type: 'string' })).toEqual({ type: 'string' })
    expect(valueSchemaSpecToJsonSchema({ type: 'array' })).toEqual({ type: 'array' })
    expect(valueSchemaSpecToJsonSchema({ type: 'json' })).toEqual({})
  })

  test('reports every bad path of a spec at once', () => {
    const bad = {
      type: 'object',
      properties: {
        a: { type: 'object' },
        b: { type: 'string', enum: [1] },
        c: { oneOf: [{ type: 'string' }] },
        d: { type: 'integer', const: 1.5 },
        e: { type: 'nope' },
        f: { foo: 1 },
        g: { type: 'string', required: false },
        h: { type: 'string', items: { type: 'string' } },
        i: { type: 'array', items: { type: 'string', required: true } },
        j: { type: 'string', oneOf: [{ type: 'string' }, { type: 'null' }] },
        k: { type: 'string', description: 1 },
        l: { type: 'string', enum: ['x'], const: 'x' },
        m: { type: 'object', additionalProperties: 'yes' },
      },
    }
    expect(specPaths(() => valueSchemaSpecToJsonSchema(bad as unknown as ValueSchemaSpec))).toEqual([
      '/additionalProperties',
      '/properties/a/additionalProperties',
      '/properties/b/enum/0',
      '/properties/c/oneOf',
      '/properties/d/const',
      '/properties/e/type',
      '/properties/f',
      '/properties/f/foo',
      '/properties/g/required',
      '/properties/h/items',
      '/properties/j/type',
      '/properties/k/description',
      '/properties/l/const',
      '/properties/m/additionalProperties',
      '/properties/i/items/required',
    ])
  })

  test('rejects required on a value root and non-JSON specs', () => {
    expect(specPaths(() => valueSchemaSpecToJsonSchema({ type: 'string', required: true } as ValueSchemaSpec))).toEqual(
      ['/required'],
    )
    expect(
      specPaths(() =>
        valueSchemaSpecToJsonSchema({ type: 'string', default: undefined } as unknown as ValueSchemaSpec),
      ),
    ).toEqual(['/default'])
    expect(specPaths(() => valueSchemaSpecToJsonSchema(null as unknown as ValueSchemaSpec))).toEqual([''])
  })

  test('compiles a 100 000-deep spec iteratively', () => {
    let spec: ValueSchemaSpec = { type: 'string' }
    for (let i = 0; i < 100_000; i++) spec = { type: 'array', items: spec }
    let schema: unknown = valueSchemaSpecToJsonSchema(spec)
    for (let i = 0; i < 100_000; i++) schema = (schema as { items: unknown }).items
    expect(schema).toEqual({ type: 'string' })
  })
})

describe('parameterSchemaSpecToJsonSchema', () => {
  test('compiles the implicit open object root with required keys', () => {
    const spec: ParameterSchemaSpec = {
      path: { type: 'string', required: true, description: 'file' },
      limit: { type: 'integer' },
    }
    expect(parameterSchemaSpecToJsonSchema(spec)).toEqual({
      type: 'object',
      properties: { path: { type: 'string', description: 'file' }, limit: { type: 'integer' } },
      required: ['path'],
    })
    expect(parameterSchemaSpecToJsonSchema({})).toEqual({ type: 'object', properties: {} })
  })

  test('keeps __proto__ as an ordinary parameter name', () => {
    const spec = JSON.parse('{"__proto__": {"type": "string", "required": true}}') as ParameterSchemaSpec
    const schema = parameterSchemaSpecToJsonSchema(spec)
    expect(Object.hasOwn(schema.properties ?? {}, '__proto__')).toBe(true)
    expect(schema.required).toEqual(['__proto__'])
  })

  test('reports bad properties and symbol keys', () => {
    expect(
      specPaths(() =>
        parameterSchemaSpecToJsonSchema({
          a: { type: 'object' },
          b: { type: 'bad' },
        } as unknown as ParameterSchemaSpec),
      ),
    ).toEqual(['/a/additionalProperties', '/b/type'])
    expect(
      specPaths(() =>
        parameterSchemaSpecToJsonSchema({ [Symbol('s')]: { type: 'string' } } as unknown as ParameterSchemaSpec),
      ),
    ).toEqual([''])
    expect(specPaths(() => parameterSchemaSpecToJsonSchema([] as unknown as ParameterSchemaSpec))).toEqual([''])
  })
})
