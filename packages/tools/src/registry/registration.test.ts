import { describe, expect, test } from 'vitest'
import { ToolRegistrationError } from '../errors.js'
import { agent, runOne, textOf, tool } from '../pipeline/fixtures/tool.js'
import type { ToolDefinition } from '../types/definition.js'
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
        parameters: { type: 'object', properties: { path: { type: 'string', description: 'a path' } }, required: ['path'] },
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
      parameters: { type: 'object', properties: { path: { type: 'string', description: 'a path' } }, required: ['path'] },
    })
    expect(second?.parameters).not.toBe(first.parameters)
    expect(definition.parameters).toEqual({ type: 'object', properties: { path: { type: 'string', description: 'a path' } }, required: ['path'] })
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
  const invalid = (overrides: Record<string, unknown>): ToolDefinition => ({ ...tool('bad'), ...overrides }) as unknown as ToolDefinition

  test('rejects a definition without an output declaration', () => {
    const tools = new ToolsService()
    expect(() => tools.register(invalid({ output: undefined }))).toThrow(/`output` is required/)
  })

  test('rejects an output without a renderer', () => {
    const tools = new ToolsService()
    expect(() => tools.register(invalid({ output: { schema: {} } }))).toThrow(/output\.render/)
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
      tools.register(invalid({ name: 'run_code', output: { schema: { type: 'string', format: 'uri' } }, timeoutMs: -1, isConcurrencySafe: 'yes' }))
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
