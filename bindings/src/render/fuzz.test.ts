import { assertObjectJsonSchema, type JsonSchemaNode, type JsonValue, type ObjectJsonSchema } from '@ptc/tools'
import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import { checkProgram } from '../check/index.js'
import { _quote } from '../names/binding-names.js'
import { renderDeclarations, type BindingTool } from './declarations.js'

const text = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 10 }),
  fc.string({
    unit: fc.constantFrom(
      'a',
      '*/',
      '*',
      '/',
      '\u2028',
      '\u2029',
      '\n',
      '\r',
      '\ud800',
      '\udc00',
      '`',
      '"',
      '\\',
      '${',
      '}',
      '@',
      ' ',
    ),
    maxLength: 10,
  }),
)
const key = fc.oneof(fc.constantFrom('__proto__', 'class', 'a-b', '', 'constructor', 'toString', 'x y', '0', 'é'), text)
const finite = fc
  .oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }))
  .filter((n) => !Object.is(n, -0))
const json = fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.parse(JSON.stringify(v)) as JsonValue)
const annotations = fc.record(
  { description: text, title: text, default: json, examples: fc.array(json, { maxLength: 2 }) },
  { requiredKeys: [] },
)

const scalarValues: Record<string, fc.Arbitrary<string | number | boolean | null>> = {
  string: text,
  number: finite,
  integer: fc.integer(),
  boolean: fc.boolean(),
  null: fc.constant(null),
}
const scalar = fc
  .tuple(fc.constantFrom('string', 'number', 'integer', 'boolean', 'null'), fc.nat(2))
  .chain(([type, mode]): fc.Arbitrary<JsonSchemaNode> => {
    const values = scalarValues[type] as fc.Arbitrary<string | number | boolean | null>
    const node = { type } as JsonSchemaNode
    if (mode === 0) return fc.constant(node)
    if (mode === 1) return values.map((value) => ({ ...node, const: value }))
    return fc.uniqueArray(values, { minLength: 1, maxLength: 3 }).map((values) => ({ ...node, enum: values }))
  })

const { node: supportedNode, object: objectNode } = fc.letrec<{
  node: JsonSchemaNode
  array: JsonSchemaNode
  object: ObjectJsonSchema
  oneOf: JsonSchemaNode
}>((tie) => ({
  node: fc
    .tuple(
      fc.oneof({ depthSize: 'small', maxDepth: 3 }, scalar, fc.constant({}), tie('array'), tie('object'), tie('oneOf')),
      annotations,
    )
    .map(([node, notes]) => ({ ...node, ...notes })),
  array: fc
    .option(tie('node'), { nil: undefined })
    .map((items) => (items === undefined ? { type: 'array' } : { type: 'array', items })),
  object: fc
    .tuple(fc.dictionary(key, tie('node'), { maxKeys: 4 }), fc.option(fc.boolean(), { nil: undefined }))
    .chain(([properties, additional]) =>
      fc.subarray(Object.keys(properties)).map((required) => ({
        type: 'object' as const,
        properties,
        required,
        ...(additional === undefined ? {} : { additionalProperties: additional }),
      })),
    ),
  oneOf: fc.array(tie('node'), { minLength: 2, maxLength: 3 }).map((oneOf) => ({ oneOf })),
}))

const toolName = key.filter((name) => name !== '' && name !== 'run_code')
const toolSet = fc.uniqueArray(
  fc.record({ name: toolName, description: text, parameters: objectNode, output: supportedNode }),
  {
    selector: (tool) => tool.name,
    minLength: 1,
    maxLength: 4,
  },
)

/**
 * Source text of one value the schema accepts: the first branch, the first literal, every
 * property (`__proto__` as a computed key, which creates an own property) plus an extra key when open.
 */
function sampleSource(schema: JsonSchemaNode): string {
  if (schema.const !== undefined) return _quoteJson(schema.const)
  if (schema.enum !== undefined) return _quoteJson(schema.enum[0])
  if (schema.oneOf !== undefined) return sampleSource(schema.oneOf[0] as JsonSchemaNode)
  switch (schema.type) {
    case 'string':
      return '"s"'
    case 'number':
    case 'integer':
      return '1'
    case 'boolean':
      return 'true'
    case 'array':
      return schema.items === undefined ? '[1, "x"]' : `[${sampleSource(schema.items)}]`
    case 'object': {
      const names = Object.keys(schema.properties ?? {})
      const members = names.map(
        (name) =>
          `${name === '__proto__' ? '["__proto__"]' : _quote(name)}: ${sampleSource(schema.properties?.[name] as JsonSchemaNode)}`,
      )
      if (schema.additionalProperties !== false && !names.includes('zz_extra')) members.push('zz_extra: [null]')
      return `{ ${members.join(', ')} }`
    }
    default:
      return 'null'
  }
}
const _quoteJson = (value: unknown): string => (typeof value === 'string' ? _quote(value) : JSON.stringify(value))

describe('generated schemas', () => {
  test('every supported schema yields declarations that compile, and accept values of the schema', () => {
    fc.assert(
      fc.property(toolSet, (tools) => {
        for (const tool of tools) assertObjectJsonSchema(tool.parameters)
        const declarations = renderDeclarations(tools)
        expect(renderDeclarations([...tools].reverse())).toBe(declarations)
        const program = tools
          .map((tool, i) => {
            const ref = _quote(tool.name)
            const args = `const a${i}: ToolArgsMap[${ref}] = ${sampleSource(tool.parameters)}`
            return `${args}\nconst o${i}: ToolOutputMap[${ref}] = ${sampleSource(tool.output)}\nawait tools[${ref}](a${i})\nvoid o${i}`
          })
          .join('\n')
        expect(checkProgram(program, declarations).diagnostics).toEqual([])
      }),
      { numRuns: 40 },
    )
  })
})

describe('arbitrary input', () => {
  const keywords = fc.constantFrom(
    'type',
    'properties',
    'items',
    'oneOf',
    'enum',
    'const',
    'required',
    'additionalProperties',
    'description',
    'title',
    'default',
    'examples',
    '$ref',
  )
  const { loose } = fc.letrec<{ loose: unknown }>((tie) => ({
    loose: fc.oneof(
      { depthSize: 'small', maxDepth: 4 },
      fc.anything({
        withNullPrototype: true,
        withBoxedValues: true,
        withMap: true,
        withSparseArray: true,
        withBigInt: true,
      }),
      fc.constantFrom('object', 'array', 'string', 'integer', 'toString', '__proto__'),
      fc.dictionary(fc.oneof(keywords, key), tie('loose'), { maxKeys: 5 }),
      fc.array(tie('loose'), { maxLength: 3 }),
    ),
  }))
  const looseTools = fc.array(
    fc.record({
      name: fc.oneof(toolName, fc.anything()),
      description: fc.anything(),
      parameters: loose,
      output: loose,
    }),
    { maxLength: 4 },
  )

  test('never throws', () => {
    fc.assert(
      fc.property(looseTools, (tools) => {
        expect(typeof renderDeclarations(tools as unknown as BindingTool[])).toBe('string')
      }),
      { numRuns: 500 },
    )
  })

  test('whatever it renders compiles', () => {
    fc.assert(
      fc.property(looseTools, (tools) => {
        const rendered = renderDeclarations(tools as unknown as BindingTool[])
        expect(checkProgram('', rendered).diagnostics).toEqual([])
      }),
      { numRuns: 40 },
    )
  })
})
