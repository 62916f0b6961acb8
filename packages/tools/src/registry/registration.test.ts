import { describe, expect, test } from 'vitest'
import { ToolRegistrationError } from '../errors.js'
import { agent, runOne, textOf, tool } from '../pipeline/fixtures/tool.js'
import { defineTool } from '../schema/define-tool.js'
import type { ToolDefinition } from '../types/tool.js'
import { ToolsService } from './service.js'

/** A definition with every host-only field set, to prove none of them leaks. */
function loadedTool(): ToolDefinition {
  return tool('loaded', {
    parameters: { type: 'object', properties: { path: { type: 'string', description: 'a path' } }, required: ['path'] },
    timeoutMs: 500,
    isConcurrencySafe: () => true,
    projectContent: () => undefined,
    finalizeContent: () => undefined,
    presentCall: () => undefined,
    presentResult: () => undefined,
  })
}

describe('schemas()', () => {
  test('projects only name, description and parameters', () => {
    const tools = new ToolsService()
    tools.register(loadedTool())
    const schemas = tools.schemas()
    expect(schemas).toEqual([
      {
        name: 'loaded',
        description: 'the loaded tool',
        parameters: {
          type: 'object',
          properties: { path: { type: 'string', description: 'a path' } },
          required: ['path'],
        },
      },
    ])
    const first = schemas[0]
    expect(first === undefined ? [] : Object.keys(first).sort()).toEqual(['description', 'name', 'parameters'])
    // Nothing that is not plain JSON survives a JSON round trip unchanged.
    expect(JSON.parse(JSON.stringify(schemas))).toEqual(schemas)
  })

  test('returns detached deep copies: mutating one changes neither the next call nor the registration', () => {
    const tools = new ToolsService()
    const definition = loadedTool()
    tools.register(definition)
    const first = tools.schemas()[0]
    if (first === undefined) throw new Error('no schema')
    first.name = 'hacked'
    first.description = 'hacked'
    first.parameters.required?.push('extra')
    const props = first.parameters.properties
    if (props !== undefined) props['path'] = { type: 'number' }
    first.parameters.additionalProperties = false

    const second = tools.schemas()[0]
    expect(second).toEqual({
      name: 'loaded',
      description: 'the loaded tool',
      parameters: {
        type: 'object',
        properties: { path: { type: 'string', description: 'a path' } },
        required: ['path'],
      },
    })
    expect(second?.parameters).not.toBe(first.parameters)
    expect(definition.parameters).toEqual({
      type: 'object',
      properties: { path: { type: 'string', description: 'a path' } },
      required: ['path'],
    })
  })

  test('mutating the definition after registration does not change the declared parameters', () => {
    const tools = new ToolsService()
    const definition = tool('t', { parameters: { type: 'object', properties: { a: { type: 'string' } } } })
    tools.register(definition)
    const props = definition.parameters.properties
    if (props !== undefined) props['b'] = { type: 'number' }
    expect(tools.schemas()[0]?.parameters).toEqual({ type: 'object', properties: { a: { type: 'string' } } })
  })
})

describe('register() validation', () => {
  const invalid = (overrides: Record<string, unknown>): ToolDefinition =>
    ({ ...tool('bad'), ...overrides }) as unknown as ToolDefinition

  const problem = (overrides: Record<string, unknown>): string => {
    try {
      new ToolsService().register(invalid(overrides))
    } catch (error) {
      expect(error).toBeInstanceOf(ToolRegistrationError)
      return error instanceof Error ? error.message : String(error)
    }
    throw new Error('registered')
  }
  const hint = '(defineTool renders JSON when render is omitted)'

  test('a definition without output says that output is missing and what to give', () => {
    const { output: _, ...noOutput } = tool('get_stock')
    let message = ''
    try {
      new ToolsService().register(noOutput as ToolDefinition)
    } catch (error) {
      message = error instanceof Error ? error.message : ''
    }
    expect(message).toBe(`invalid tool "get_stock": \`output\` is missing: give { schema, render } ${hint}`)
    expect(problem({ output: undefined })).toBe(
      `invalid tool "bad": \`output\` is missing: give { schema, render } ${hint}`,
    )
  })

  test('output: null, a string or an array is named as such', () => {
    expect(problem({ output: null })).toBe(`invalid tool "bad": \`output\` is null: give { schema, render } ${hint}`)
    expect(problem({ output: 'json' })).toBe(
      'invalid tool "bad": `output` must be an object { schema, render }, not a string',
    )
    expect(problem({ output: [] })).toBe(
      'invalid tool "bad": `output` must be an object { schema, render }, not an array',
    )
  })

  test('an output without schema says that output.schema is missing', () => {
    expect(problem({ output: { render: () => [] } })).toBe(
      'invalid tool "bad": `output.schema` is missing: give the JSON Schema of the value `execute` resolves to',
    )
  })

  test('an output without render says that output.render is missing; one that is not a function says what it is', () => {
    expect(problem({ output: { schema: {} } })).toBe(
      `invalid tool "bad": \`output.render\` is missing: give (args, value) => ContentBlock[] ${hint}`,
    )
    expect(problem({ output: { schema: {}, render: 'text' } })).toBe(
      'invalid tool "bad": `output.render` must be a function, not a string',
    )
    expect(problem({ output: { schema: {}, render: () => [], presentationMeta: 1 } })).toBe(
      'invalid tool "bad": `output.presentationMeta` must be a function, not a number',
    )
  })

  test('an empty output names both missing fields', () => {
    expect(problem({ output: {} })).toBe(
      `invalid tool "bad": \`output.schema\` is missing: give the JSON Schema of the value \`execute\` resolves to; \`output.render\` is missing: give (args, value) => ContentBlock[] ${hint}`,
    )
  })

  test('defineTool without output fails at registration with the same message; without render it registers and renders JSON', async () => {
    const base = {
      name: 'get_stock',
      description: 'd',
      parameters: { sku: { type: 'string', required: true } },
      execute: async () => ({ count: 2 }),
    } as const
    const tools = new ToolsService()
    expect(() => tools.register(defineTool(base as never))).toThrow(
      `invalid tool "get_stock": \`output\` is missing: give { schema, render } ${hint}`,
    )
    expect(() => tools.register(defineTool({ ...base, output: { render: () => [] } } as never))).toThrow(
      '`output.schema` is missing',
    )
    tools.register(
      defineTool({
        ...base,
        output: { schema: { type: 'object', properties: { count: { type: 'integer' } }, additionalProperties: false } },
      }),
    )
    const result = await runOne(tools, 'get_stock', { sku: 'A' })
    expect(result.isError).toBe(false)
    expect(result.content).toEqual([{ type: 'text', text: '{\n  "count": 2\n}' }])
  })

  test('each output field is read once', () => {
    let reads = 0
    const output = {
      get schema() {
        reads++
        return reads === 1 ? { type: 'string' } : { type: 'string', pattern: 'x' }
      },
      render: () => [],
    }
    expect(() => new ToolsService().register(invalid({ output }))).not.toThrow()
    expect(reads).toBe(1)
  })

  test('rejects an output schema that uses an unsupported keyword', () => {
    const tools = new ToolsService()
    const output = { schema: { type: 'string', pattern: '^a' }, render: () => [] }
    expect(() => tools.register(invalid({ output }))).toThrow(ToolRegistrationError)
    expect(() => tools.register(invalid({ output }))).toThrow(/output\.schema.*pattern/)
  })

  test.each([0, -1, Number.NaN, Number.POSITIVE_INFINITY, '5'])('rejects timeoutMs %s', (timeoutMs) => {
    const tools = new ToolsService()
    expect(() => tools.register(invalid({ timeoutMs }))).toThrow(/timeoutMs/)
    expect(tools.definitions()).toEqual([])
  })

  test('accepts a positive finite timeoutMs', () => {
    const tools = new ToolsService()
    tools.register(tool('t', { timeoutMs: 0.5 }))
    expect(tools.get('t')?.timeoutMs).toBe(0.5)
  })

  test('rejects a duplicate name in the same layer', () => {
    const tools = new ToolsService()
    tools.register(tool('t'))
    expect(() => tools.register(tool('t'))).toThrow(/already registered/)
    const a = agent('a')
    tools.scoped(a).register(tool('s'))
    expect(() => tools.scoped(a).register(tool('s'))).toThrow(/already registered/)
  })

  test('rejects the reserved name run_code, globally and in a scope', () => {
    const tools = new ToolsService()
    expect(() => tools.register(tool('run_code'))).toThrow(/reserved/)
    expect(() => tools.scoped(agent('a')).register(tool('run_code'))).toThrow(/reserved/)
  })

  test('lists every problem of a definition in one error', () => {
    const tools = new ToolsService()
    let message = ''
    try {
      tools.register(
        invalid({
          name: 'run_code',
          output: { schema: { type: 'string', format: 'uri' } },
          timeoutMs: -1,
          isConcurrencySafe: 'yes',
        }),
      )
    } catch (error) {
      expect(error).toBeInstanceOf(ToolRegistrationError)
      message = error instanceof Error ? error.message : ''
    }
    expect(message).toMatch(/reserved/)
    expect(message).toMatch(/output\.render/)
    expect(message).toMatch(/output\.schema.*format/)
    expect(message).toMatch(/timeoutMs/)
    expect(message).toMatch(/isConcurrencySafe/)
  })

  test('a rejected registration registers nothing and fires no change', () => {
    const tools = new ToolsService()
    let changes = 0
    tools.on('tools/change', () => changes++)
    expect(() => tools.register(invalid({ output: undefined }))).toThrow()
    expect(tools.definitions()).toEqual([])
    expect(changes).toBe(0)
  })
})

describe('shadowing and disposers', () => {
  test('a scoped registration shadows a global one for that scope only', async () => {
    const tools = new ToolsService()
    const a = agent('a')
    tools.register(tool('t', { execute: () => Promise.resolve('global') }))
    tools.scoped(a).register(tool('t', { execute: () => Promise.resolve('scoped') }))
    expect(textOf(await runOne(tools, 't', {}, { agent: a }))).toBe('"scoped"')
    expect(textOf(await runOne(tools, 't', {}, { agent: agent('b') }))).toBe('"global"')
    expect(textOf(await runOne(tools, 't'))).toBe('"global"')
    expect(tools.definitions(a).map((d) => d.name)).toEqual(['t'])
  })

  test('a registration in an ancestor scope is inherited and shadowed by the agent', () => {
    const tools = new ToolsService()
    const preset = agent('preset')
    const a = agent('a', { parent: preset })
    const inPreset = tool('t')
    tools.scoped(preset).register(inPreset)
    expect(tools.get('t', a)).toBe(inPreset)
    const own = tool('t')
    tools.scoped(a).register(own)
    expect(tools.get('t', a)).toBe(own)
    expect(tools.get('t', preset)).toBe(inPreset)
    expect(tools.get('t')).toBeUndefined()
  })

  test('disposing the scoped registration reveals the global one again', () => {
    const tools = new ToolsService()
    const a = agent('a')
    const global = tool('t')
    tools.register(global)
    const dispose = tools.scoped(a).register(tool('t'))
    dispose()
    expect(tools.get('t', a)).toBe(global)
  })

  test('disposing twice is harmless and never removes a later registration of the same name', () => {
    const tools = new ToolsService()
    const disposeA = tools.register(tool('t'))
    disposeA()
    const b = tool('t')
    tools.register(b)
    disposeA()
    expect(tools.get('t')).toBe(b)
  })

  test('disposing A does not remove B', () => {
    const tools = new ToolsService()
    const a = agent('a')
    const disposeScoped = tools.scoped(a).register(tool('t'))
    const global = tool('t')
    tools.register(global)
    const other = tool('u')
    tools.register(other)
    disposeScoped()
    expect(tools.get('t', a)).toBe(global)
    expect(tools.get('u')).toBe(other)
  })

  test('a disposed registration cannot be called', async () => {
    const tools = new ToolsService()
    const dispose = tools.register(tool('t'))
    dispose()
    const result = await runOne(tools, 't')
    expect(result.isError && result.error.info?.code).toBe('UNKNOWN_TOOL')
  })
})
