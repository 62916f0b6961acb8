import { describe, expect, test } from 'vitest'
import { checkProgram } from '../check/index.js'
import { renderDeclarations, type BindingTool } from './declarations.js'
import { _renderType } from './schema-type.js'

const render = (node: unknown, maxDepth = 16): string => _renderType(node, 0, { maxDepth, nodesLeft: 100_000 })

describe('schema nodes', () => {
  test('scalars, integer as number, literals via JSON', () => {
    expect(render({ type: 'integer' })).toBe('number')
    expect(render({ type: 'null' })).toBe('null')
    expect(render({ type: 'string', enum: ['a"b', 'c\u2028'] })).toBe('"a\\"b" | "c\\u2028"')
    expect(render({ enum: [1, true, null, 'x', 1] })).toBe('1 | true | null | "x"')
    expect(render({ type: 'number', const: -0 })).toBe('0')
    expect(render({ type: 'string', enum: [] })).toBe('never')
  })
  test('no type and no constraint is any JSON', () => {
    expect(render({})).toBe('JsonValue')
    expect(render({ description: 'anything' })).toBe('JsonValue')
  })
  test('closed empty objects accept only {}; open empty objects any record', () => {
    expect(render({ type: 'object', additionalProperties: false })).toBe('Record<string, never>')
    expect(render({ type: 'object', properties: {} })).toBe('Record<string, JsonValue>')
  })
  test('property keys are quoted when needed, __proto__ is an ordinary key', () => {
    const properties = JSON.parse(
      '{"__proto__": {"type": "string"}, "a-b": {"type": "number"}, "class": {"type": "boolean"}}',
    ) as Record<string, unknown>
    expect(render({ type: 'object', properties, required: ['__proto__'], additionalProperties: false })).toBe(
      '{\n  "__proto__": string\n  "a-b"?: number\n  class?: boolean\n}',
    )
  })
})

describe('what the subset cannot say degrades to unknown, never throws', () => {
  const cyclic: Record<string, unknown> = { type: 'array' }
  cyclic['items'] = cyclic
  const revoked = Proxy.revocable({}, {})
  revoked.revoke()
  const cases: [string, unknown, string][] = [
    ['an unsupported keyword', { type: 'string', format: 'email' }, 'unknown'],
    ['$ref', { $ref: '#/defs/x' }, 'unknown'],
    ['a type array', { type: ['string', 'null'] }, 'unknown'],
    ['an unknown type', { type: 'toString' }, 'unknown'],
    ['a keyword on the wrong type', { type: 'string', items: {} }, 'unknown'],
    ['oneOf with type', { type: 'string', oneOf: [{}, {}] }, 'unknown'],
    ['empty oneOf', { oneOf: [] }, 'unknown'],
    ['properties not an object', { type: 'object', properties: 5 }, 'unknown'],
    ['required not an array', { type: 'object', required: 'a' }, 'unknown'],
    ['additionalProperties a schema', { type: 'object', additionalProperties: {} }, 'unknown'],
    ['a non-scalar enum member', { enum: [{}] }, 'unknown'],
    ['a non-finite const', { const: Number.NaN }, 'unknown'],
    ['a non-object node', 42, 'unknown'],
    ['null', null, 'unknown'],
    ['an array node', [], 'unknown'],
    [
      'a throwing getter',
      {
        get type(): string {
          throw new Error('boom')
        },
      },
      'unknown',
    ],
    ['a revoked proxy', revoked.proxy, 'unknown'],
    ['a cycle', cyclic, 'unknown[]'],
    ['a malformed item', { type: 'array', items: 'string' }, 'unknown[]'],
  ]
  test.each(cases)('%s', (_name, node, expected) => {
    expect(render(node)).toBe(expected)
  })
  test('a malformed property degrades alone', () => {
    expect(
      render({
        type: 'object',
        properties: { a: { type: 'uuid' }, b: { type: 'string' } },
        additionalProperties: false,
      }),
    ).toBe('{\n  a?: unknown\n  b?: string\n}')
  })
  test('a hostile tool list renders a compiling file', () => {
    const hostile = [
      { name: 'x', description: 5, parameters: 'no', output: cyclic },
      7,
      { name: 3 },
    ] as unknown as BindingTool[]
    const text = renderDeclarations(hostile)
    expect(text).toContain('  x: unknown\n')
    expect(text).toContain('  x: unknown[]\n')
    expect(checkProgram('', text).diagnostics).toEqual([])
    expect(() => renderDeclarations('nope' as unknown as BindingTool[])).not.toThrow()
  })
})

describe('deep schemas', () => {
  const deepObject = (depth: number): unknown => {
    let node: unknown = { type: 'string' }
    for (let i = 0; i < depth; i++)
      node = { type: 'object', properties: { a: node }, required: ['a'], additionalProperties: false }
    return node
  }
  const deepArray = (depth: number): unknown => {
    let node: unknown = { type: 'string' }
    for (let i = 0; i < depth; i++) node = { type: 'array', items: node }
    return node
  }

  test('a 10 000-deep schema renders exactly 16 levels below the root, then JsonValue, and compiles', () => {
    const tool: BindingTool = {
      name: 'deep',
      description: '',
      parameters: deepObject(10_000) as BindingTool['parameters'],
      output: deepArray(10_000) as BindingTool['output'],
    }
    const text = renderDeclarations([tool])
    expect(text).toContain(`${'  '.repeat(17)}a: JsonValue\n`)
    expect(text).toContain(`  deep: JsonValue${'[]'.repeat(17)}\n`)
    expect(
      checkProgram(
        'const r = await tools.deep({ a: { a: { a: {} } } })\nconst s: string = r[0]![0]![0]!',
        text,
      ).diagnostics.map((d) => d.code),
    ).toEqual([
      2741, // property 'a' is missing: the first 16 levels are exact
      2322, // JsonValue[]… is not a string
    ])
  })

  test('without a depth limit, a 10 000-deep schema still renders without a stack overflow', () => {
    expect(render(deepArray(10_000), 100_000)).toBe(`string${'[]'.repeat(10_000)}`)
    let union: unknown = { type: 'null' }
    for (let i = 0; i < 10_000; i++) union = { oneOf: [{ type: 'string', const: String(i) }, union] }
    const text = render(union, 100_000)
    expect(text.startsWith('"9999" | "9998" | ')).toBe(true)
    expect(text.endsWith('"0" | null')).toBe(true)
    expect(render(deepObject(2_000), 100_000).split('\n')).toHaveLength(2 * 2_000 + 1)
  })

  test('a node budget bounds shared (DAG) schemas', () => {
    let node: unknown = { type: 'string' }
    for (let i = 0; i < 40; i++)
      node = { type: 'object', properties: { l: node, r: node }, additionalProperties: false }
    const text = _renderType(node, 0, { maxDepth: 100, nodesLeft: 1_000 })
    expect(text.length).toBeLessThan(200_000)
    expect(text).toContain('JsonValue')
  })
})
