import { describe, expect, test } from 'vitest'
import { NoExecutorError } from '../errors.js'
import { createNativeExecutor } from '../executor/native.js'
import { agent, call, runBatch, tool } from '../pipeline/fixtures/tool.js'
import type { ToolDefinition } from '../types/tool.js'
import type { ToolBatchInput, ToolBatchResult, ToolExecutor } from '../types/executor.js'
import { ToolsService } from './service.js'

/** An executor that answers every batch with a fixed marker and records what it was given. */
function markerExecutor(marker: string, seen: ToolBatchInput[] = []): ToolExecutor {
  return {
    sections: [{ name: 'guide', text: `use ${marker}` }],
    describe: (tools: readonly ToolDefinition[]) => ({
      schemas: [{ name: marker, description: `${tools.length} tools`, parameters: { type: 'object' } }],
      knownNames: [marker],
    }),
    execute: (input: ToolBatchInput): Promise<ToolBatchResult> => {
      seen.push(input)
      return Promise.resolve({
        results: input.calls.map((c) => ({
          callId: c.id,
          result: { isError: false, value: marker, content: [{ type: 'text', text: marker }] },
        })),
        additionalContexts: [],
        concluded: false,
      })
    },
  }
}

describe('executor selection', () => {
  test('the native executor is the default', async () => {
    const tools = new ToolsService()
    tools.register(tool('t', { execute: () => Promise.resolve('native') }))
    const batch = await runBatch(tools, [call('t')])
    expect(batch.results[0]?.result.content).toEqual([{ type: 'text', text: '"native"' }])
  })

  test('setExecutor on a scope overrides the default for that agent only', async () => {
    const tools = new ToolsService()
    tools.register(tool('t', { execute: () => Promise.resolve('native') }))
    const a = agent('a')
    const seen: ToolBatchInput[] = []
    tools.scoped(a).setExecutor(markerExecutor('custom', seen))
    const mine = await runBatch(tools, [call('t')], { agent: a })
    expect(mine.results[0]?.result.content).toEqual([{ type: 'text', text: 'custom' }])
    expect(seen).toHaveLength(1)
    const other = await runBatch(tools, [call('t')], { agent: agent('b') })
    expect(other.results[0]?.result.content).toEqual([{ type: 'text', text: '"native"' }])
  })

  test("a scope's executor applies to its child agents", async () => {
    const tools = new ToolsService()
    const preset = agent('preset')
    tools.scoped(preset).setExecutor(markerExecutor('custom'))
    const batch = await runBatch(tools, [call('t')], { agent: agent('a', { parent: preset }) })
    expect(batch.results[0]?.result.content).toEqual([{ type: 'text', text: 'custom' }])
  })

  test('a scoped view with no agent in the batch runs on behalf of its scope', async () => {
    const tools = new ToolsService()
    const a = agent('a')
    const seen: ToolBatchInput[] = []
    tools.scoped(a).setExecutor(markerExecutor('custom', seen))
    await runBatch(tools.scoped(a), [call('t')])
    expect(seen[0]?.agent).toBe(a)
  })

  test('disposing a scoped executor leaves the scope unavailable: execute rejects with NO_EXECUTOR', async () => {
    const tools = new ToolsService()
    const a = agent('a')
    const dispose = tools.scoped(a).setExecutor(markerExecutor('custom'))
    dispose()
    await expect(runBatch(tools, [call('t')], { agent: a })).rejects.toBeInstanceOf(NoExecutorError)
    await expect(runBatch(tools, [call('t')], { agent: a })).rejects.toMatchObject({ code: 'NO_EXECUTOR' })
    expect(() => tools.modelInput(a)).toThrow(NoExecutorError)
    // Other agents keep the default.
    await expect(runBatch(tools, [call('t')], { agent: agent('b') })).resolves.toBeDefined()
  })

  test('disposing the deployment default leaves unscoped calls unavailable', async () => {
    const tools = new ToolsService()
    const dispose = tools.setExecutor(markerExecutor('custom'))
    expect((await runBatch(tools, [call('t')])).results[0]?.result.content).toEqual([{ type: 'text', text: 'custom' }])
    dispose()
    await expect(runBatch(tools, [call('t')])).rejects.toMatchObject({ code: 'NO_EXECUTOR' })
  })

  test('a stale disposer does not remove a newer executor', async () => {
    const tools = new ToolsService()
    const a = agent('a')
    const disposeFirst = tools.scoped(a).setExecutor(markerExecutor('first'))
    tools.scoped(a).setExecutor(markerExecutor('second'))
    disposeFirst()
    const batch = await runBatch(tools, [call('t')], { agent: a })
    expect(batch.results[0]?.result.content).toEqual([{ type: 'text', text: 'second' }])
  })

  test('a replacement after disposal makes the scope available again', async () => {
    const tools = new ToolsService()
    const a = agent('a')
    tools.scoped(a).setExecutor(markerExecutor('first'))()
    tools.scoped(a).setExecutor(createNativeExecutor())
    tools.register(tool('t'))
    const batch = await runBatch(tools, [call('t')], { agent: a })
    expect(batch.results[0]?.result.isError).toBe(false)
  })

  test('execute rejects a batch without a signal or with a bad concurrency override', async () => {
    const tools = new ToolsService()
    await expect(tools.execute({ calls: [] } as unknown as ToolBatchInput)).rejects.toThrow(/AbortSignal/)
    await expect(runBatch(tools, [], { maxParallelToolCalls: 0 })).rejects.toThrow(/positive integer/)
    await expect(runBatch(tools, [], { log: { turn: 1, step: 1 } })).rejects.toThrow(/agent/)
  })
})

describe('modelInput()', () => {
  test('describes the visible tools in the selected executor mode, with its sections', () => {
    const tools = new ToolsService()
    tools.register(tool('t', { timeoutMs: 100, parameters: { type: 'object', properties: { q: { type: 'string' } } } }))
    const native = tools.modelInput()
    expect(native).toEqual({
      schemas: [
        { name: 't', description: 'the t tool', parameters: { type: 'object', properties: { q: { type: 'string' } } } },
      ],
      knownNames: ['t'],
      sections: [],
    })
    const a = agent('a')
    tools.scoped(a).setExecutor(markerExecutor('custom'))
    expect(tools.modelInput(a)).toEqual({
      schemas: [{ name: 'custom', description: '1 tools', parameters: { type: 'object' } }],
      knownNames: ['custom'],
      sections: [{ name: 'guide', text: 'use custom' }],
    })
  })

  test("a step section supersedes the executor's section of the same name", () => {
    const tools = new ToolsService()
    const executor = markerExecutor('custom')
    tools.setExecutor({
      ...executor,
      sections: [
        { name: 'guide', text: 'general guidance' },
        { name: 'rules', text: 'house rules' },
      ],
      describe: (visible) => ({
        ...executor.describe(visible),
        sections: [{ name: 'guide', text: 'guidance for this step' }],
      }),
    })
    expect(tools.modelInput().sections).toEqual([
      { name: 'rules', text: 'house rules' },
      { name: 'guide', text: 'guidance for this step' },
    ])
  })

  test('native schemas are detached from the registration', () => {
    const tools = new ToolsService()
    tools.register(tool('t', { parameters: { type: 'object', properties: { q: { type: 'string' } } } }))
    const first = tools.modelInput().schemas[0]
    if (first?.parameters.properties !== undefined) first.parameters.properties['q'] = { type: 'number' }
    expect(tools.modelInput().schemas[0]?.parameters.properties).toEqual({ q: { type: 'string' } })
    expect(tools.get('t')?.parameters.properties).toEqual({ q: { type: 'string' } })
  })

  test('describe() is given the parameters and output schema frozen at registration, not the live definition', () => {
    const tools = new ToolsService()
    const definition = tool('t', { parameters: { type: 'object', properties: { q: { type: 'string' } } } })
    tools.register(definition)
    const seen: ToolDefinition[] = []
    const native = createNativeExecutor()
    tools.setExecutor({
      ...native,
      describe: (visible) => {
        seen.push(...visible)
        return native.describe(visible)
      },
    })
    definition.parameters.properties = { q: { type: 'number' }, extra: { type: 'boolean' } }
    definition.output.schema.type = 'string'
    expect(tools.modelInput().schemas).toEqual(tools.schemas())
    expect(tools.schemas()[0]?.parameters.properties).toEqual({ q: { type: 'string' } })
    expect(seen[0]?.parameters.properties).toEqual({ q: { type: 'string' } })
    expect(seen[0]?.output.schema).toEqual({})
    expect(Object.isFrozen(seen[0]?.parameters.properties)).toBe(true)
    expect(seen[0]?.execute).toBe(definition.execute)
  })
})
