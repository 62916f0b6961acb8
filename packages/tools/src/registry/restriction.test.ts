import { describe, expect, test } from 'vitest'
import { ToolRestrictionError } from '../errors.js'
import { agent, tool } from '../pipeline/fixtures/tool.js'
import { ToolsService } from './service.js'

function setup(): { tools: ToolsService; a: ReturnType<typeof agent> } {
  const tools = new ToolsService()
  tools.register(tool('read'))
  tools.register(tool('write'))
  tools.register(tool('shell'))
  return { tools, a: agent('a') }
}

const names = (tools: ToolsService, scope?: ReturnType<typeof agent>): string[] =>
  tools.definitions(scope).map((d) => d.name)

describe('restrict()', () => {
  test('is available on scoped views only', () => {
    const { tools } = setup()
    expect(() => tools.restrict({ deny: ['read'] })).toThrow(ToolRestrictionError)
  })

  test.each([
    ['an empty filter', {}],
    ['an empty allow list', { allow: [] }],
    ['an empty deny list', { deny: [] }],
    ['an unknown name', { allow: ['nope'] }],
    ['run_code', { deny: ['run_code'] }],
  ])('rejects %s', (_label, filter) => {
    const { tools, a } = setup()
    expect(() => tools.scoped(a).restrict(filter)).toThrow(ToolRestrictionError)
    expect(names(tools, a)).toEqual(['read', 'write', 'shell'])
  })

  test('rejects a name registered in the scope itself', () => {
    const { tools, a } = setup()
    tools.scoped(a).register(tool('mine'))
    expect(() => tools.scoped(a).restrict({ deny: ['mine'] })).toThrow(/registered in this scope/)
  })

  test("rejects a name registered only in another agent's scope as unknown", () => {
    const { tools, a } = setup()
    tools.scoped(agent('b')).register(tool('theirs'))
    expect(() => tools.scoped(a).restrict({ allow: ['theirs'] })).toThrow(/unknown tool/)
  })

  test('deny hides the listed globals from that scope only', () => {
    const { tools, a } = setup()
    tools.scoped(a).restrict({ deny: ['shell'] })
    expect(names(tools, a)).toEqual(['read', 'write'])
    expect(names(tools, agent('b'))).toEqual(['read', 'write', 'shell'])
    expect(names(tools)).toEqual(['read', 'write', 'shell'])
    expect(tools.get('shell', a)).toBeUndefined()
    expect(tools.executable('shell', a)).toBeUndefined()
  })

  test('restrictions intersect', () => {
    const { tools, a } = setup()
    tools.scoped(a).restrict({ allow: ['read', 'write'] })
    tools.scoped(a).restrict({ allow: ['write', 'shell'] })
    expect(names(tools, a)).toEqual(['write'])
    tools.scoped(a).restrict({ deny: ['write'] })
    expect(names(tools, a)).toEqual([])
  })

  test('deny-only admits later unlisted globals', () => {
    const { tools, a } = setup()
    tools.scoped(a).restrict({ deny: ['shell'] })
    tools.register(tool('later'))
    expect(names(tools, a)).toEqual(['read', 'write', 'later'])
  })

  test('allow excludes later unlisted globals', () => {
    const { tools, a } = setup()
    tools.scoped(a).restrict({ allow: ['read'] })
    tools.register(tool('later'))
    expect(names(tools, a)).toEqual(['read'])
  })

  test("the scope's own registrations are never filtered, even when registered after an allow list", () => {
    const { tools, a } = setup()
    tools.scoped(a).restrict({ allow: ['read'] })
    tools.scoped(a).register(tool('mine'))
    expect(names(tools, a)).toEqual(['read', 'mine'])
  })

  test("a scope's own registration shadowing a denied global stays visible", () => {
    const { tools, a } = setup()
    tools.scoped(a).restrict({ deny: ['shell'] })
    const own = tool('shell')
    tools.scoped(a).register(own)
    expect(tools.get('shell', a)).toBe(own)
  })

  test("an agent's restriction also filters its parent scope's registrations", () => {
    const { tools } = setup()
    const preset = agent('preset')
    const a = agent('a', { parent: preset })
    tools.scoped(preset).register(tool('preset-tool'))
    tools.scoped(a).restrict({ deny: ['preset-tool', 'read'] })
    expect(names(tools, a)).toEqual(['write', 'shell'])
    expect(names(tools, preset)).toEqual(['read', 'write', 'shell', 'preset-tool'])
  })

  test("a parent's restriction applies to its child agents", () => {
    const { tools } = setup()
    const preset = agent('preset')
    const a = agent('a', { parent: preset })
    tools.scoped(preset).restrict({ allow: ['read'] })
    expect(names(tools, a)).toEqual(['read'])
  })

  test('the disposer lifts exactly its restriction, and twice is harmless', () => {
    const { tools, a } = setup()
    const liftDeny = tools.scoped(a).restrict({ deny: ['shell'] })
    tools.scoped(a).restrict({ deny: ['read'] })
    liftDeny()
    liftDeny()
    expect(names(tools, a)).toEqual(['write', 'shell'])
  })

  test('the disposer restores the globals to the scope', () => {
    const { tools, a } = setup()
    const lift = tools.scoped(a).restrict({ allow: ['read'] })
    lift()
    expect(names(tools, a)).toEqual(['read', 'write', 'shell'])
  })
})

describe('tools/change', () => {
  test('fires on register, unregister, restrict and lifting, for global and scoped listeners', () => {
    const tools = new ToolsService()
    const a = agent('a')
    let global = 0
    let scoped = 0
    tools.on('tools/change', () => global++)
    tools.scoped(agent('other')).on('tools/change', () => scoped++)

    const dispose = tools.register(tool('t'))
    expect([global, scoped]).toEqual([1, 1])
    const lift = tools.scoped(a).restrict({ deny: ['t'] })
    expect([global, scoped]).toEqual([2, 2])
    lift()
    expect([global, scoped]).toEqual([3, 3])
    const disposeScoped = tools.scoped(a).register(tool('u'))
    expect([global, scoped]).toEqual([4, 4])
    disposeScoped()
    dispose()
    expect([global, scoped]).toEqual([6, 6])
    dispose()
    lift()
    expect([global, scoped]).toEqual([6, 6])
  })

  test('a throwing change listener does not stop registration or later listeners', () => {
    const tools = new ToolsService()
    let later = 0
    tools.on('tools/change', () => {
      throw new Error('observer failed')
    })
    tools.on('tools/change', () => later++)
    tools.register(tool('t'))
    expect(later).toBe(1)
    expect(tools.get('t')).toBeDefined()
  })

  test('a rejecting async change listener is caught', async () => {
    const tools = new ToolsService()
    tools.on('tools/change', () => Promise.reject(new Error('async observer failed')) as unknown as void)
    tools.register(tool('t'))
    await new Promise((resolve) => setTimeout(resolve, 5))
    expect(tools.get('t')).toBeDefined()
  })
})
