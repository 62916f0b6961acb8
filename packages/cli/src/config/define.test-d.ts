import type { CodeRunLimits } from '@ptc/sandbox'
import { defineTool, type ApprovalOutcome, type ApprovalRequest, type ToolsService } from '@ptc/tools'
import { describe, expectTypeOf, test } from 'vitest'
import { defineConfig, type PtcConfig } from './define.js'

const echo = defineTool({
  name: 'echo',
  description: 'Echoes a text.',
  parameters: { text: { type: 'string', required: true } },
  output: { schema: { type: 'string' }, render: (_args, text) => [{ type: 'text', text }] },
  execute: async ({ text }) => text,
})

describe('defineConfig', () => {
  test('types every key and returns its argument as a PtcConfig', () => {
    const config = defineConfig({
      tools: [echo],
      setup(service) {
        expectTypeOf(service).toEqualTypeOf<ToolsService>()
        service.on('tools/pre-execute', (exec, next) =>
          exec.name === 'echo' ? { kind: 'deny', reason: 'no echoes' } : next(),
        )
        service.guard((exec) => (exec.name === 'echo' ? 'never' : undefined))
      },
      approval: {
        request: async (request) => {
          expectTypeOf(request).toEqualTypeOf<ApprovalRequest>()
          return 'allowed-once'
        },
      },
      limits: { cpuMs: 1000, memoryBytes: 64 * 1024 * 1024 },
      sandbox: 'isolated-vm',
    })
    expectTypeOf(config).toEqualTypeOf<PtcConfig>()
    expectTypeOf<NonNullable<PtcConfig['limits']>>().toEqualTypeOf<Partial<CodeRunLimits>>()
    expectTypeOf<ReturnType<NonNullable<PtcConfig['approval']>['request']>>().toEqualTypeOf<Promise<ApprovalOutcome>>()
  })

  test('setup may be async or return a disposer, and every key is optional', () => {
    defineConfig({})
    defineConfig({ setup: async () => undefined })
    defineConfig({ setup: (service) => service.guard(() => undefined) })
    // @ts-expect-error -- setup takes the service
    defineConfig({ setup: (service: string) => service })
  })

  test('an unknown key, a wrong sandbox or a wrong limit is a type error', () => {
    // @ts-expect-error -- `tool` is not a key (excess property)
    defineConfig({ tool: [echo] })
    // @ts-expect-error -- not a sandbox
    defineConfig({ sandbox: 'v8' })
    // @ts-expect-error -- not a limit
    defineConfig({ limits: { cpuMS: 1 } })
    // @ts-expect-error -- an approval answers with an outcome
    defineConfig({ approval: { request: async () => true } })
  })

  test('discovery is false or { budgetChars?, alwaysLoaded? }', () => {
    defineConfig({ discovery: false })
    defineConfig({ discovery: { budgetChars: 4000, alwaysLoaded: ['echo'] } })
    // @ts-expect-error -- on is the default: omit it
    defineConfig({ discovery: true })
    // @ts-expect-error -- not a discovery setting
    defineConfig({ discovery: { budget: 4000 } })
  })
})
