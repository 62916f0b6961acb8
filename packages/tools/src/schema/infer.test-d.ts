import { describe, expectTypeOf, test } from 'vitest'
import type { JsonValue } from '../json/types.js'
import type { ParameterSchemaSpec, ValueSchemaSpec } from './dsl.js'
import type { InferArgs, InferValue } from './infer.js'

/** Captures a spec with literal types, as `defineTool` does. */
function value<const S extends ValueSchemaSpec>(spec: S): S {
  return spec
}
function params<const P extends ParameterSchemaSpec>(spec: P): P {
  return spec
}

describe('InferValue', () => {
  test('scalars infer their primitive types', () => {
    expectTypeOf<InferValue<{ type: 'string' }>>().toEqualTypeOf<string>()
    expectTypeOf<InferValue<{ type: 'number' }>>().toEqualTypeOf<number>()
    expectTypeOf<InferValue<{ type: 'integer' }>>().toEqualTypeOf<number>()
    expectTypeOf<InferValue<{ type: 'boolean' }>>().toEqualTypeOf<boolean>()
    expectTypeOf<InferValue<{ type: 'null' }>>().toEqualTypeOf<null>()
  })

  test('literal enum and const types are preserved', () => {
    const _s = value({ type: 'string', enum: ['a', 'b'] })
    expectTypeOf<InferValue<typeof _s>>().toEqualTypeOf<'a' | 'b'>()
    const _n = value({ type: 'integer', const: 3 })
    expectTypeOf<InferValue<typeof _n>>().toEqualTypeOf<3>()
    const _b = value({ type: 'boolean', enum: [true] })
    expectTypeOf<InferValue<typeof _b>>().toEqualTypeOf<true>()
  })

  test('a widened enum falls back to the primitive type', () => {
    expectTypeOf<InferValue<{ type: 'string'; enum?: readonly string[] }>>().toEqualTypeOf<string>()
  })

  test('json infers JsonValue', () => {
    expectTypeOf<InferValue<{ type: 'json' }>>().toEqualTypeOf<JsonValue>()
  })

  test('oneOf infers a union of its branches', () => {
    const _s = value({ oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'number' } }, { type: 'null' }] })
    expectTypeOf<InferValue<typeof _s>>().toEqualTypeOf<string | number[] | null>()
  })

  test('arrays without items hold any JSON', () => {
    expectTypeOf<InferValue<{ type: 'array' }>>().toEqualTypeOf<JsonValue[]>()
  })

  test('closed objects are exact, with required and optional keys', () => {
    const _s = value({
      type: 'object',
      additionalProperties: false,
      properties: { id: { type: 'string', required: true }, tags: { type: 'array', items: { type: 'string' } } },
    })
    expectTypeOf<InferValue<typeof _s>>().toEqualTypeOf<{ id: string; tags?: string[] }>()
    expectTypeOf<InferValue<{ type: 'object'; additionalProperties: false }>>().toEqualTypeOf<Record<string, never>>()
  })

  test('open objects also admit extra JSON keys', () => {
    const _s = value({
      type: 'object',
      additionalProperties: true,
      properties: { id: { type: 'integer', required: true } },
    })
    type V = InferValue<typeof _s>
    expectTypeOf<V['id']>().toEqualTypeOf<number>()
    expectTypeOf<V['other']>().toEqualTypeOf<JsonValue>()
    expectTypeOf<{ id: 1; extra: 'x' }>().toMatchTypeOf<V>()
    expectTypeOf<InferValue<{ type: 'object'; additionalProperties: true }>>().toEqualTypeOf<{
      [key: string]: JsonValue
    }>()
  })

  test('nested objects and arrays infer exactly', () => {
    const _s = value({
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        properties: {
          point: {
            type: 'object',
            additionalProperties: false,
            properties: { x: { type: 'number', required: true } },
            required: true,
          },
        },
      },
    })
    expectTypeOf<InferValue<typeof _s>>().toEqualTypeOf<{ point: { x: number } }[]>()
  })

  test('exact inference reaches 16 container levels, then JsonValue', () => {
    type Nest<S, N extends unknown[]> = N['length'] extends 0
      ? S
      : { type: 'array'; items: Nest<S, N extends [unknown, ...infer R] ? R : []> }
    type Sixteen = Nest<{ type: 'string' }, [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]>
    type Seventeen = Nest<{ type: 'string' }, [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]>
    expectTypeOf<InferValue<Sixteen>>().toEqualTypeOf<string[][][][][][][][][][][][][][][][]>()
    expectTypeOf<InferValue<Seventeen>>().toEqualTypeOf<JsonValue[][][][][][][][][][][][][][][][]>()
  })
})

describe('InferArgs', () => {
  test('required: true makes a key required; others are optional', () => {
    const _p = params({
      path: { type: 'string', required: true },
      limit: { type: 'integer' },
      mode: { type: 'string', enum: ['r', 'w'] },
    })
    expectTypeOf<InferArgs<typeof _p>>().toEqualTypeOf<{ path: string; limit?: number; mode?: 'r' | 'w' }>()
  })

  test('an empty parameter spec infers an empty object', () => {
    expectTypeOf<InferArgs<Record<never, never>>>().toEqualTypeOf<Record<never, never>>()
  })

  test('parameter specs reject symbol keys and object specs need additionalProperties', () => {
    // @ts-expect-error symbol keys are `never`
    params({ [Symbol('x')]: { type: 'string' } })
    // @ts-expect-error an explicit object node must declare additionalProperties
    value({ type: 'object', properties: {} })
    // @ts-expect-error enum entries must match the type
    value({ type: 'string', enum: [1] })
    // @ts-expect-error oneOf needs at least two branches
    value({ oneOf: [{ type: 'string' }] })
  })
})
