/** Property tests of the JSON Schema -> enforced subset converter. */
import { assertObjectJsonSchema, assertSupportedJsonSchema, type JsonSchemaNode } from '../json-schema.js'
import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import { convertJsonSchema, convertObjectJsonSchema } from './convert.js'

const KEYWORDS = [
  'type',
  'properties',
  'required',
  'items',
  'enum',
  'const',
  'anyOf',
  'oneOf',
  'allOf',
  '$ref',
  'not',
  'format',
  'minimum',
  'pattern',
  'additionalProperties',
  'nullable',
  'description',
  'default',
  '$defs',
  'prefixItems',
]
const TYPES = ['object', 'array', 'string', 'number', 'integer', 'boolean', 'null', 'weird']

/** Anything resembling a JSON Schema, hostile shapes included. */
const anySchema = fc.letrec<{ node: unknown }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.boolean(),
    fc.jsonValue({ maxDepth: 2 }),
    fc.dictionary(
      fc.constantFrom(...KEYWORDS),
      fc.oneof(
        fc.constantFrom(...TYPES),
        fc.array(fc.constantFrom(...TYPES), { maxLength: 3 }),
        fc.dictionary(fc.string({ maxLength: 3 }), tie('node'), { maxKeys: 3 }),
        fc.array(tie('node'), { maxLength: 3 }),
        fc.array(fc.oneof(fc.string({ maxLength: 2 }), fc.integer(), fc.constant(null)), { maxLength: 3 }),
        fc.constantFrom('#', '#/$defs/a', '#/properties/x', 'http://x/y', '#/nope'),
        tie('node'),
        fc.jsonValue({ maxDepth: 1 }),
      ),
      { maxKeys: 5 },
    ),
  ),
}))

/** Schemas already inside the subset. */
const subsetSchema: fc.Arbitrary<JsonSchemaNode> = fc.letrec<{ node: JsonSchemaNode }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom<JsonSchemaNode>(
      { type: 'string' },
      { type: 'integer', enum: [1, 2] },
      { type: 'boolean', description: 'b' },
      { type: 'null' },
      { type: 'string', const: 'k' },
      {},
    ),
    tie('node').map((items): JsonSchemaNode => ({ type: 'array', items })),
    fc.dictionary(fc.constantFrom('a', 'b', 'c', '__proto__'), tie('node'), { maxKeys: 3 }).chain((properties) =>
      fc.subarray(Object.keys(properties)).chain((required) =>
        fc.boolean().map(
          (closed): JsonSchemaNode => ({
            type: 'object',
            properties,
            ...(required.length > 0 && { required }),
            additionalProperties: closed,
          }),
        ),
      ),
    ),
    fc.array(tie('node'), { minLength: 2, maxLength: 3 }).map((oneOf): JsonSchemaNode => ({ oneOf })),
  ),
})).node

describe('convertJsonSchema (properties)', () => {
  test('is total and always yields a supported schema; object conversion yields an object schema or a reason', () => {
    fc.assert(
      fc.property(anySchema.node, (source) => {
        const { schema } = convertJsonSchema(source)
        assertSupportedJsonSchema(schema)
        const root = convertObjectJsonSchema(source)
        if (root.ok) assertObjectJsonSchema(root.schema)
        else expect(root.reason).toMatch(/\S/)
      }),
      { numRuns: 1500 },
    )
  })

  test('a schema already in the subset converts to itself without warnings', () => {
    fc.assert(
      fc.property(subsetSchema, (source) => {
        assertSupportedJsonSchema(source)
        const { schema, warnings } = convertJsonSchema(source)
        expect(warnings).toEqual([])
        expect(JSON.parse(JSON.stringify(schema))).toEqual(JSON.parse(JSON.stringify(source)))
      }),
      { numRuns: 800 },
    )
  })
})
