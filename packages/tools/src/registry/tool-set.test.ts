import { describe, expect, test } from 'vitest'
import { agent, codeOf, deferred, runOne, tool } from '../pipeline/fixtures/tool.js'
import type { ToolActivationContext } from '../types/tool.js'
import type { Agent } from '../types/scope.js'
import { ToolsService } from './service.js'
import { ToolSetResolutionError } from './tool-set.js'

const model = { provider: 'test', model: 'm1' }
const context = (a: Agent, signal = new AbortController().signal): ToolActivationContext => ({
  agent: a,
  modelSelection: model,
  signal,
})

describe('conditional admission', () => {
  test('a false condition hides the tool from definitions, schemas and dispatch of the step', async () => {
    const tools = new ToolsService()
    const a = agent('a')
    tools.register(tool('always'))
    tools.register(tool('on'), { when: () => true })
    tools.register(tool('off'), { when: () => Promise.resolve(false) })
    const set = await tools.resolve(context(a))
    expect(tools.definitions(a, set).map((d) => d.name)).toEqual(['always', 'on'])
    expect(tools.schemas(a, set).map((s) => s.name)).toEqual(['always', 'on'])
    expect(tools.get('off', a, set)).toBeUndefined()
    expect(codeOf(await runOne(tools, 'off', {}, { agent: a, toolSet: set }))).toBe('UNKNOWN_TOOL')
    expect((await runOne(tools, 'on', {}, { agent: a, toolSet: set })).isError).toBe(false)
  })

  test('conditions receive the agent, the model selection and the signal, once per resolve', async () => {
    const tools = new ToolsService()
    const a = agent('a')
    const seen: ToolActivationContext[] = []
    tools.register(tool('t'), {
      when: (ctx) => {
        seen.push(ctx)
        return true
      },
    })
    const signal = new AbortController().signal
    await tools.resolve({ agent: a, modelSelection: { provider: 'p', model: 'm', reasoningEffort: 'high' }, signal })
    expect(seen).toHaveLength(1)
    expect(seen[0]?.agent).toBe(a)
    expect(seen[0]?.signal).toBe(signal)
    expect(seen[0]?.modelSelection).toEqual({ provider: 'p', model: 'm', reasoningEffort: 'high' })
  })

  test('a rejected condition fails resolve with no partial set', async () => {
    const tools = new ToolsService()
    tools.register(tool('fine'), { when: () => true })
    tools.register(tool('broken'), { when: () => Promise.reject(new Error('flaky')) })
    await expect(tools.resolve(context(agent('a')))).rejects.toThrow(ToolSetResolutionError)
    await expect(tools.resolve(context(agent('a')))).rejects.toThrow(/broken.*flaky/)
  })

  test('a synchronously throwing condition fails resolve', async () => {
    const tools = new ToolsService()
    tools.register(tool('broken'), {
      when: () => {
        throw new Error('sync')
      },
    })
    await expect(tools.resolve(context(agent('a')))).rejects.toThrow(/sync/)
  })

  test('a non-boolean condition result fails resolve', async () => {
    const tools = new ToolsService()
    tools.register(tool('t'), { when: () => 1 as unknown as boolean })
    await expect(tools.resolve(context(agent('a')))).rejects.toThrow(/not a boolean/)
  })

  test('a step cancelled while conditions run publishes no set', async () => {
    const tools = new ToolsService()
    const gate = deferred<boolean>()
    tools.register(tool('t'), { when: () => gate.promise })
    const controller = new AbortController()
    const pending = tools.resolve(context(agent('a'), controller.signal))
    controller.abort()
    gate.resolve(true)
    await expect(pending).rejects.toThrow(/cancelled/)
  })

  test('without a set, conditional registrations are not executable but still inspectable', async () => {
    const tools = new ToolsService()
    const a = agent('a')
    tools.register(tool('cond'), { when: () => true })
    expect(tools.executable('cond', a)).toBeUndefined()
    expect(tools.get('cond', a)).toBeDefined()
    expect(codeOf(await runOne(tools, 'cond', {}, { agent: a }))).toBe('UNKNOWN_TOOL')
  })

  test('a set resolved for agent A admits nothing for agent B', async () => {
    const tools = new ToolsService()
    const a = agent('a')
    const b = agent('b')
    tools.register(tool('t'), { when: () => true })
    tools.register(tool('plain'))
    const set = await tools.resolve(context(a))
    expect(tools.definitions(b, set)).toEqual([])
    expect(set.view(b).size).toBe(0)
    expect(codeOf(await runOne(tools, 'plain', {}, { agent: b, toolSet: set }))).toBe('UNKNOWN_TOOL')
    expect(codeOf(await runOne(tools, 't', {}, { agent: b, toolSet: set }))).toBe('UNKNOWN_TOOL')
  })

  test('dispose() closes the set', async () => {
    const tools = new ToolsService()
    const a = agent('a')
    tools.register(tool('t'), { when: () => true })
    const set = await tools.resolve(context(a))
    expect(set.view(a).has('t')).toBe(true)
    set.dispose()
    expect(set.view(a).size).toBe(0)
    expect(tools.definitions(a, set)).toEqual([])
    expect(codeOf(await runOne(tools, 't', {}, { agent: a, toolSet: set }))).toBe('UNKNOWN_TOOL')
  })

  test('a same-name replacement after resolve stops calls that have not started', async () => {
    const tools = new ToolsService()
    const a = agent('a')
    let ranOld = 0
    let ranNew = 0
    const dispose = tools.register(
      tool('t', {
        execute: () => {
          ranOld++
          return Promise.resolve(null)
        },
      }),
      { when: () => true },
    )
    const set = await tools.resolve(context(a))
    dispose()
    tools.register(
      tool('t', {
        execute: () => {
          ranNew++
          return Promise.resolve(null)
        },
      }),
    )
    expect(codeOf(await runOne(tools, 't', {}, { agent: a, toolSet: set }))).toBe('UNKNOWN_TOOL')
    expect([ranOld, ranNew]).toEqual([0, 0])
  })

  test('a scoped replacement after resolve stops calls that have not started', async () => {
    const tools = new ToolsService()
    const a = agent('a')
    tools.register(tool('t'))
    const set = await tools.resolve(context(a))
    tools.scoped(a).register(tool('t'))
    expect(codeOf(await runOne(tools, 't', {}, { agent: a, toolSet: set }))).toBe('UNKNOWN_TOOL')
  })

  test('a new restriction after resolve stops calls that have not started', async () => {
    const tools = new ToolsService()
    const a = agent('a')
    tools.register(tool('t'))
    tools.register(tool('u'))
    const set = await tools.resolve(context(a))
    tools.scoped(a).restrict({ deny: ['t'] })
    expect(codeOf(await runOne(tools, 't', {}, { agent: a, toolSet: set }))).toBe('UNKNOWN_TOOL')
    expect(tools.definitions(a, set).map((d) => d.name)).toEqual(['u'])
  })

  test('a replacement while pre-execute runs stops the call before its body', async () => {
    const tools = new ToolsService()
    const a = agent('a')
    let ran = 0
    tools.register(
      tool('t', {
        execute: () => {
          ran++
          return Promise.resolve(null)
        },
      }),
    )
    const set = await tools.resolve(context(a))
    tools.on('tools/pre-execute', async (_exec, next) => {
      tools.scoped(a).register(tool('t'))
      return next()
    })
    expect(codeOf(await runOne(tools, 't', {}, { agent: a, toolSet: set }))).toBe('UNKNOWN_TOOL')
    expect(ran).toBe(0)
  })

  test('a registration removed while conditions run is not admitted', async () => {
    const tools = new ToolsService()
    const a = agent('a')
    const gate = deferred<boolean>()
    const dispose = tools.register(tool('t'), { when: () => gate.promise })
    const pending = tools.resolve(context(a))
    dispose()
    tools.register(tool('t'))
    gate.resolve(true)
    const set = await pending
    expect(set.view(a).size).toBe(0)
  })
})
