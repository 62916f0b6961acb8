import { describe, expect, test } from 'vitest'
import { JsonSchemaError, ToolArgsError } from '../errors.js'
import { parseJsonArguments } from '../json/parse.js'
import type { ToolRunContext } from '../types/index.js'
import { defineTool, validateArgs } from './define-tool.js'
import { compileJsonSchema } from './validate.js'

const ctx = {} as ToolRunContext

function makeTool(calls: unknown[] = []) {
  return defineTool({
    name: 'read_file',
    description: 'Read a file.',
    parameters: {
      path: { type: 'string', required: true },
      limit: { type: 'integer' },
      mode: { type: 'string', enum: ['text', 'bytes'] },
    },
    output: {
      schema: { type: 'object', additionalProperties: false, properties: { text: { type: 'string', required: true } } },
      render: (args, value) => [{ type: 'text', text: `${args.path}: ${value.text}` }],
      presentationMeta: (args) => ({ path: args.path }),
    },
    isConcurrencySafe: (args) => args.mode !== 'bytes',
    presentCall: (args) => ({ card: 'generic', title: `Read ${args.path}` }),
    presentResult: (args) => ({ card: 'generic', title: `Read ${args.path} (done)` }),
    timeoutMs: 500,
    execute: async (args) => {
      calls.push(args)
      return { text: `contents of ${args.path}` }
    },
  })
}

describe('defineTool', () => {
  test('produces a raw ToolDefinition with compiled JSON schemas', () => {
    const tool = makeTool()
    expect(tool.name).toBe('read_file')
    expect(tool.parameters).toEqual({
      type: 'object',
      properties: {
        path: { type: 'string' },
        limit: { type: 'integer' },
        mode: { type: 'string', enum: ['text', 'bytes'] },
      },
      required: ['path'],
    })
    expect(tool.output.schema).toEqual({
      type: 'object',
      properties: { text: { type: 'string' } },
      required: ['text'],
      additionalProperties: false,
    })
    expect(tool.timeoutMs).toBe(500)
    expect(Object.isFrozen(tool)).toBe(true)
    expect(tool.projectContent).toBeUndefined()
    expect('finalizeContent' in tool).toBe(false)
  })

  test('execute validates arguments before the body runs', async () => {
    const calls: unknown[] = []
    const tool = makeTool(calls)
    await expect(tool.execute({ path: 'a.txt', limit: 3 }, ctx)).resolves.toEqual({ text: 'contents of a.txt' })
    expect(calls).toEqual([{ path: 'a.txt', limit: 3 }])
    expect(Object.isFrozen(calls[0])).toBe(true)
    const rejected = tool.execute({ limit: 1.5, mode: 'x' }, ctx)
    await expect(rejected).rejects.toBeInstanceOf(ToolArgsError)
    await expect(rejected).rejects.toMatchObject({
      code: 'INVALID_ARGS',
      violations: [
        { path: '/limit', message: 'expected integer, got number 1.5' },
        { path: '/mode', message: 'must be one of "text", "bytes"' },
        { path: '/path', message: 'is required' },
      ],
    })
    await expect(rejected).rejects.toThrow(/\/limit: expected integer.*\/path: is required/)
    await expect(tool.execute({ path: 'a', f: () => 1 }, ctx)).rejects.toThrow(/\/f: a function is not JSON/)
    expect(calls).toHaveLength(1)
  })

  test('the body sees the value validation saw, even with a flaky getter', async () => {
    const calls: unknown[] = []
    const tool = makeTool(calls)
    let reads = 0
    const args = {
      get path(): unknown {
        reads++
        return reads === 1 ? 'ok.txt' : 42
      },
    }
    await tool.execute(args, ctx)
    expect(calls).toEqual([{ path: 'ok.txt' }])
    expect(reads).toBe(1)
  })

  test('parsed arguments are used as they are, without another copy', async () => {
    const calls: unknown[] = []
    const parsed = parseJsonArguments('{"path": "p"}')
    if (!parsed.ok) throw new Error(parsed.message)
    await makeTool(calls).execute(parsed.value, ctx)
    expect(calls[0]).toBe(parsed.value)
  })

  test('isConcurrencySafe and the presenters only see valid arguments', () => {
    const tool = makeTool()
    expect(tool.isConcurrencySafe?.({ path: 'a' })).toBe(true)
    expect(tool.isConcurrencySafe?.({ path: 'a', mode: 'bytes' })).toBe(false)
    expect(tool.isConcurrencySafe?.({ path: 1 })).toBe(false)
    expect(tool.isConcurrencySafe?.(undefined)).toBe(false)
    expect(tool.presentCall?.({ path: 'a' })).toEqual({ card: 'generic', title: 'Read a' })
    expect(tool.presentCall?.({})).toBeUndefined()
    expect(tool.presentResult?.({ path: 'a' }, { isError: false, content: [] })).toEqual({
      card: 'generic',
      title: 'Read a (done)',
    })
    expect(tool.presentResult?.('nope', { isError: true, content: [] })).toBeUndefined()
  })

  test('isConcurrencySafe is exclusive when the classifier throws', () => {
    const tool = defineTool({
      name: 't',
      description: 'd',
      parameters: {},
      output: { schema: { type: 'null' }, render: () => [] },
      isConcurrencySafe: () => {
        throw new Error('classifier bug')
      },
      execute: async () => null,
    })
    expect(tool.isConcurrencySafe?.({})).toBe(false)
  })

  test('render and presentationMeta receive the typed values', () => {
    const tool = makeTool()
    expect(tool.output.render({ path: 'a' }, { text: 'hi' })).toEqual([{ type: 'text', text: 'a: hi' }])
    expect(tool.output.presentationMeta?.({ path: 'a' }, { text: 'hi' })).toEqual({ path: 'a' })
  })

  test('without render the value renders as pretty JSON text, one text block', async () => {
    const tool = defineTool({
      name: 'stock',
      description: 'Stock.',
      parameters: { sku: { type: 'string', required: true } },
      output: {
        schema: {
          type: 'object',
          additionalProperties: false,
          properties: { sku: { type: 'string' }, count: { type: 'integer' } },
        },
      },
      execute: async ({ sku }) => ({ sku, count: 3 }),
    })
    const value = await tool.execute({ sku: 'A-1' }, ctx)
    expect(tool.output.render({ sku: 'A-1' }, value as never)).toEqual([
      { type: 'text', text: '{\n  "sku": "A-1",\n  "count": 3\n}' },
    ])
    expect(tool.output.render({}, 'plain')).toEqual([{ type: 'text', text: '"plain"' }])
    expect(tool.output.render({}, null)).toEqual([{ type: 'text', text: 'null' }])
    expect(Object.isFrozen(tool.output)).toBe(true)
    expect(tool.output.presentationMeta).toBeUndefined()
  })

  test('a given render is called on its output declaration, as a method', () => {
    const output = {
      schema: { type: 'string' },
      prefix: '>',
      render(this: { prefix: string }, _args: unknown, value: string) {
        return [{ type: 'text' as const, text: `${this.prefix} ${value}` }]
      },
    } as const
    const tool = defineTool({ name: 't', description: 'd', parameters: {}, output, execute: async () => 'x' })
    expect(tool.output.render({}, 'x')).toEqual([{ type: 'text', text: '> x' }])
  })

  test('an output that is missing or not a function passes through to registration unchanged', () => {
    const base = { name: 't', description: 'd', parameters: {}, execute: async () => null }
    expect(defineTool({ ...base, output: undefined } as never).output).toBeUndefined()
    expect(defineTool({ ...base, output: null } as never).output).toBeNull()
    const noSchema = defineTool({ ...base, output: { render: () => [] } } as never).output
    expect('schema' in noSchema).toBe(false)
    expect(typeof noSchema.render).toBe('function')
    const notFunctions = defineTool({
      ...base,
      output: { schema: { type: 'null' }, render: 'text', presentationMeta: 1 },
    } as never).output
    expect([notFunctions.render, notFunctions.presentationMeta]).toEqual(['text', 1])
  })

  test('an invalid spec throws JsonSchemaError at definition time', () => {
    expect(() =>
      defineTool({
        name: 't',
        description: 'd',
        parameters: { a: { type: 'object' } as never },
        output: { schema: { type: 'string', enum: [1] } as never, render: () => [] },
        execute: async () => 'x' as never,
      }),
    ).toThrow(JsonSchemaError)
  })
})

describe('validateArgs', () => {
  const schema = { type: 'object' as const, properties: { q: { type: 'string' as const } }, required: ['q'] }

  test('returns the frozen arguments or throws ToolArgsError listing every path', () => {
    const args = validateArgs(schema, { q: 'x' })
    expect(args).toEqual({ q: 'x' })
    expect(Object.isFrozen(args)).toBe(true)
    expect(() => validateArgs(schema, {})).toThrow(ToolArgsError)
    expect(() => validateArgs(schema, { q: 1 })).toThrow(/invalid arguments: \/q: expected string, got number 1/)
    expect(() => validateArgs(schema, 'text')).toThrow(/\(root\): expected object/)
  })

  test('accepts a compiled validator', () => {
    const validator = compileJsonSchema(schema)
    expect(validateArgs(validator, { q: 'y' })).toEqual({ q: 'y' })
    expect(() => validateArgs(validator, { q: null })).toThrow(ToolArgsError)
  })

  test('throws JsonSchemaError for an unsupported schema', () => {
    expect(() => validateArgs({ type: 'object', patternProperties: {} } as never, {})).toThrow(JsonSchemaError)
  })
})

describe('a schema error names the tool, the field and the rule', () => {
  test('an output object without additionalProperties', () => {
    const define = () =>
      defineTool({
        name: 'get_stock',
        description: 'Stock of a product.',
        parameters: { sku: { type: 'string', required: true } },
        output: { schema: { type: 'object', properties: { units: { type: 'integer' } } } as never },
        execute: () => Promise.resolve({ units: 1 } as never),
      })
    expect(define).toThrow(JsonSchemaError)
    expect(define).toThrow(
      /^defineTool "get_stock": output\.schema: .*additionalProperties.*every object declares additionalProperties: true \(other keys allowed\) or false/,
    )
  })

  test('a bad parameter spec', () => {
    const define = () =>
      defineTool({
        name: 'order',
        description: 'Order.',
        parameters: { quantity: { type: 'decimal' } } as never,
        output: { schema: { type: 'string' } },
        execute: () => Promise.resolve('ok'),
      })
    expect(define).toThrow(/^defineTool "order": parameters: /)
  })
})
