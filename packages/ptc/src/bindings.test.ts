import { defineTool, ToolsService } from '@ptc/tools'
import { describe, expect, test, vi } from 'vitest'
import { createPtcExecutor, sdkText } from './executor.js'
import { FakeRuntime } from './testing/fake-runtime.js'

const renders = vi.hoisted(() => ({ count: 0 }))
vi.mock('@ptc/bindings', async (importOriginal) => {
  const bindings = await importOriginal<typeof import('@ptc/bindings')>()
  return {
    ...bindings,
    renderDeclarations: (...args: Parameters<typeof bindings.renderDeclarations>) => {
      renders.count++
      return bindings.renderDeclarations(...args)
    },
  }
})

const tool = (name: string) =>
  defineTool({
    name,
    description: `the ${name} tool`,
    parameters: { n: { type: 'integer', required: true } },
    output: { schema: { type: 'integer' } },
    execute: async ({ n }) => n,
  })

describe("the SDK declarations of a step's model input", () => {
  test('are rendered again only when the tools, their names or their descriptions changed', () => {
    const tools = new ToolsService()
    // A definition whose description its owner changes (defineTool's are frozen; a definition need not be).
    const a = { ...tool('alpha') }
    tools.register(a)
    tools.register(tool('beta'))
    tools.setExecutor(createPtcExecutor({ runtime: new FakeRuntime() }))
    const sdk = (): string => tools.modelInput().sections.find((s) => s.name === 'ptc-sdk')?.text ?? ''
    renders.count = 0

    const first = sdk()
    expect(sdk()).toBe(first)
    expect(sdk()).toBe(sdkText(tools.definitions()))
    expect(renders.count).toBe(2) // the two model inputs rendered once; sdkText (ptc sdk) renders its own

    // A definition's description is read through its registration: a change shows at the next request.
    a.description = 'alpha, reworded'
    expect(sdk()).toContain('alpha, reworded')
    expect(renders.count).toBe(3)
    expect(sdk()).toContain('alpha, reworded')
    expect(renders.count).toBe(3)

    // A tool registered, then removed.
    const dispose = tools.register(tool('gamma'))
    expect(sdk()).toContain('gamma')
    expect(renders.count).toBe(4)
    dispose()
    expect(sdk()).not.toContain('gamma')
    expect(sdk()).toContain('alpha, reworded')
    expect(renders.count).toBe(5)
  })
})
