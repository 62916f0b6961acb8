import { renderDeclarations, type BindingTool } from '@ptc/bindings'
import { defineTool, ToolsService, type ToolDefinition } from '@ptc/tools'
import { describe, expect, test } from 'vitest'
import { rememberedDeclarations } from './bindings.js'
import { createPtcExecutor, sdkText } from './executor.js'
import { FakeRuntime } from './testing/fake-runtime.js'

const tool = (name: string) =>
  defineTool({
    name,
    description: `the ${name} tool`,
    parameters: { n: { type: 'integer', required: true } },
    output: { schema: { type: 'integer' } },
    execute: async ({ n }) => n,
  })

describe('rememberedDeclarations', () => {
  /** The cache over a renderer that counts its calls. */
  function counted() {
    const calls: string[][] = []
    const render = (tools: readonly BindingTool[]): string => {
      calls.push(tools.map((t) => t.name))
      return renderDeclarations(tools)
    }
    return { declarations: rememberedDeclarations(render), calls }
  }

  test('renders again only when the tools, their names, descriptions or schema objects changed', () => {
    const { declarations, calls } = counted()
    const alpha: ToolDefinition = { ...tool('alpha') }
    const beta = tool('beta')
    const first = declarations([alpha, beta])
    expect(declarations([alpha, beta])).toBe(first)
    expect(calls).toHaveLength(1)
    alpha.description = 'alpha, reworded'
    expect(declarations([alpha, beta])).toContain('alpha, reworded')
    alpha.parameters = {
      type: 'object',
      properties: { m: { type: 'string' } },
      required: ['m'],
      additionalProperties: false,
    }
    expect(declarations([alpha, beta])).toContain('m: string')
    expect(declarations([beta])).not.toContain('alpha')
    expect(declarations([beta, alpha])).toContain('alpha')
    expect(calls).toHaveLength(5)
  })

  test('what is compared is what was rendered: a description read once per request', () => {
    const { declarations, calls } = counted()
    let reads = 0
    const base = tool('alpha')
    // A getter that answers differently at its first read (a description still loading).
    const alpha = Object.create(base, {
      description: { get: () => (reads++ === 0 ? 'alpha (loading…)' : 'alpha: the real description') },
    }) as ToolDefinition
    expect(declarations([alpha])).toContain('alpha (loading…)')
    expect(declarations([alpha])).toContain('alpha: the real description')
    expect(declarations([alpha])).toContain('alpha: the real description')
    expect([reads, calls.length]).toEqual([3, 2])
  })
})

describe("the SDK declarations of a step's model input", () => {
  test('follow the tools the step sees: a changed description, a tool registered, then removed', () => {
    const tools = new ToolsService()
    // A definition whose description its owner changes (defineTool's are frozen; a definition need not be).
    const a = { ...tool('alpha') }
    tools.register(a)
    tools.register(tool('beta'))
    tools.setExecutor(createPtcExecutor({ runtime: new FakeRuntime() }))
    const sdk = (): string => tools.modelInput().sections.find((s) => s.name === 'ptc-sdk')?.text ?? ''
    expect(sdk()).toBe(sdkText(tools.definitions()))
    expect(sdk()).toBe(sdkText(tools.definitions()))
    a.description = 'alpha, reworded'
    expect(sdk()).toContain('alpha, reworded')
    expect(sdk()).toBe(sdkText(tools.definitions()))
    const dispose = tools.register(tool('gamma'))
    expect(sdk()).toContain('gamma')
    dispose()
    expect(sdk()).not.toContain('gamma')
    expect(sdk()).toBe(sdkText(tools.definitions()))
  })
})
