import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import type { JsonValue } from '../json/types.js'
import type { ObjectValueSchemaSpec, PropertySchemaSpec, ValueSchemaSpec } from './dsl.js'
import { valueSchemaSpecToJsonSchema } from './to-json-schema.js'
import { compileJsonSchema } from './validate.js'

/** fc.jsonValue() may produce -0, which is not lossless JSON. */
const losslessJson = fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.parse(JSON.stringify(v)) as JsonValue)
const finite = fc.double({ noNaN: true, noDefaultInfinity: true }).filter((n) => !Object.is(n, -0))
const key = fc.oneof(fc.string({ maxLength: 6 }), fc.constantFrom('__proto__', 'constructor', 'a/b', 'toString'))

const scalarSpec: fc.Arbitrary<ValueSchemaSpec> = fc.oneof(
  fc.constant<ValueSchemaSpec>({ type: 'string' }),
  fc
    .uniqueArray(fc.string(), { minLength: 1, maxLength: 3 })
    .map((e): ValueSchemaSpec => ({ type: 'string', enum: e })),
  fc.constant<ValueSchemaSpec>({ type: 'number', description: 'n' }),
  finite.map((c): ValueSchemaSpec => ({ type: 'number', const: c })),
  fc.constant<ValueSchemaSpec>({ type: 'integer' }),
  fc
    .uniqueArray(fc.integer(), { minLength: 1, maxLength: 3 })
    .map((e): ValueSchemaSpec => ({ type: 'integer', enum: e })),
  fc.constant<ValueSchemaSpec>({ type: 'boolean' }),
  fc.constant<ValueSchemaSpec>({ type: 'null' }),
  fc.constant<ValueSchemaSpec>({ type: 'json', title: 'any' }),
)

const { spec: specArb } = fc.letrec<{ spec: ValueSchemaSpec; object: ValueSchemaSpec }>((tie) => ({
  spec: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    scalarSpec,
    tie('object'),
    fc.option(tie('spec'), { nil: undefined }).map(arrayOf),
    oneOfSpec(tie('spec'), tie('object')),
  ),
  object: fc
    .tuple(
      fc.uniqueArray(fc.tuple(key, tie('spec'), fc.boolean()), { maxLength: 4, selector: ([k]) => k }),
      fc.boolean(),
    )
    .map(([entries, additionalProperties]) => objectOf(entries, additionalProperties)),
}))

function arrayOf(items: ValueSchemaSpec | undefined): ValueSchemaSpec {
  return items === undefined ? { type: 'array' } : { type: 'array', items }
}

function objectOf(
  entries: ReadonlyArray<readonly [string, ValueSchemaSpec, boolean]>,
  additionalProperties: boolean,
): ObjectValueSchemaSpec {
  const properties: Record<string, PropertySchemaSpec> = {}
  for (const [k, spec, required] of entries) {
    Object.defineProperty(properties, k, {
      value: required ? { ...spec, required: true } : spec,
      enumerable: true,
      writable: true,
      configurable: true,
    })
  }
  return { type: 'object', properties, additionalProperties }
}

/** oneOf over distinct value families, so each value matches exactly one branch. */
function oneOfSpec(
  spec: fc.Arbitrary<ValueSchemaSpec>,
  object: fc.Arbitrary<ValueSchemaSpec>,
): fc.Arbitrary<ValueSchemaSpec> {
  const families: fc.Arbitrary<ValueSchemaSpec>[] = [
    fc.constant({ type: 'string' }),
    fc.constant({ type: 'boolean' }),
    fc.constant({ type: 'null' }),
    fc.constant({ type: 'integer' }),
    fc.option(spec, { nil: undefined }).map(arrayOf),
    object,
  ]
  return fc
    .subarray([0, 1, 2, 3, 4, 5], { minLength: 2 })
    .chain((picked) => fc.tuple(...picked.map((i) => families[i] as fc.Arbitrary<ValueSchemaSpec>)))
    .map((branches): ValueSchemaSpec => ({ oneOf: branches as unknown as [ValueSchemaSpec, ValueSchemaSpec] }))
}

/** Values that satisfy `spec`. */
function valuesOf(spec: ValueSchemaSpec): fc.Arbitrary<JsonValue> {
  if ('oneOf' in spec) return fc.oneof(...spec.oneOf.map(valuesOf))
  switch (spec.type) {
    case 'string':
    case 'number':
    case 'integer':
    case 'boolean':
    case 'null': {
      if (spec.const !== undefined) return fc.constant(spec.const)
      if (spec.enum !== undefined) return fc.constantFrom(...(spec.enum as JsonValue[]))
      return {
        string: fc.string(),
        number: finite,
        integer: fc.integer(),
        boolean: fc.boolean(),
        null: fc.constant(null),
      }[spec.type]
    }
    case 'json':
      return losslessJson
    case 'array':
      return fc.array(spec.items === undefined ? losslessJson : valuesOf(spec.items), { maxLength: 3 })
    case 'object': {
      const entries = Object.entries(spec.properties ?? {})
      const extras = spec.additionalProperties
        ? fc.dictionary(
            fc.string({ maxLength: 3 }).map((k) => `x-${k}`),
            losslessJson,
            { maxKeys: 2 },
          )
        : fc.constant({})
      return fc
        .tuple(
          fc.tuple(
            ...entries.map(([, p]) => fc.tuple(p.required === true ? fc.constant(true) : fc.boolean(), valuesOf(p))),
          ),
          extras,
        )
        .map(([values, extra]) => {
          const out: Record<string, JsonValue> = {}
          for (const [k, v] of Object.entries(extra as Record<string, JsonValue>))
            if (!Object.hasOwn(spec.properties ?? {}, k)) out[k] = v
          values.forEach(([present, v], i) => {
            if (present)
              Object.defineProperty(out, (entries[i] as [string, unknown])[0], {
                value: v,
                enumerable: true,
                writable: true,
                configurable: true,
              })
          })
          return out
        })
    }
  }
}

/** A value of another JSON type than every form `spec` accepts, or `undefined` when `spec` accepts any JSON. */
function wrongValue(spec: ValueSchemaSpec): JsonValue | undefined {
  if ('oneOf' in spec || spec.type === 'json') return undefined
  return spec.type === 'string' ? 1 : spec.type === 'array' ? { not: 'an array' } : 'not the right type'
}

const objectSpecWithValue = specArb
  .filter(
    (s): s is ObjectValueSchemaSpec => 'type' in s && s.type === 'object' && Object.keys(s.properties ?? {}).length > 0,
  )
  .chain((spec) => fc.tuple(fc.constant(spec), valuesOf(spec), fc.nat()))

describe('schema DSL properties', () => {
  test('values generated from an arbitrary spec validate against its compiled schema', () => {
    fc.assert(
      fc.property(
        specArb.chain((spec) => fc.tuple(fc.constant(spec), fc.array(valuesOf(spec), { minLength: 1, maxLength: 4 }))),
        ([spec, values]) => {
          const validator = compileJsonSchema(valueSchemaSpecToJsonSchema(spec))
          for (const value of values) expect(validator.validate(value)).toEqual([])
        },
      ),
      { numRuns: 300 },
    )
  })

  test('dropping a required key fails validation at that key', () => {
    fc.assert(
      fc.property(objectSpecWithValue, ([spec, value, pick]) => {
        const required = Object.entries(spec.properties ?? {}).filter(([, p]) => p.required === true)
        fc.pre(required.length > 0)
        const [name] = required[pick % required.length] as [string, unknown]
        const copy = { ...(value as Record<string, JsonValue>) }
        delete copy[name]
        const violations = compileJsonSchema(valueSchemaSpecToJsonSchema(spec)).validate(copy)
        expect(violations).toContainEqual({
          path: `/${name.replace(/~/g, '~0').replace(/\//g, '~1')}`,
          message: 'is required',
        })
      }),
    )
  })

  test("changing a property's type fails validation", () => {
    fc.assert(
      fc.property(objectSpecWithValue, ([spec, value, pick]) => {
        const typed = Object.entries(spec.properties ?? {}).filter(([, p]) => wrongValue(p) !== undefined)
        fc.pre(typed.length > 0)
        const [name, property] = typed[pick % typed.length] as [string, PropertySchemaSpec]
        const copy = { ...(value as Record<string, JsonValue>) }
        Object.defineProperty(copy, name, {
          value: wrongValue(property),
          enumerable: true,
          writable: true,
          configurable: true,
        })
        expect(compileJsonSchema(valueSchemaSpecToJsonSchema(spec)).validate(copy).length).toBeGreaterThan(0)
      }),
    )
  })
})
