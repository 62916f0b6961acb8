import { defineTool } from '@ptc/tools'
import { describe, expect, test } from 'vitest'
import { configViolations, suggestion } from './validate.js'

const echo = defineTool({
  name: 'echo',
  description: 'Echoes a text.',
  parameters: { text: { type: 'string', required: true } },
  output: { schema: { type: 'string' }, render: (_args, text) => [{ type: 'text', text }] },
  execute: async ({ text }) => text,
})

const messages = (value: unknown): string[] => configViolations(value).map((v) => v.message)

describe('configViolations', () => {
  test('a full, valid config has none', () => {
    const config = { tools: [echo], setup: () => undefined, approval: { request: async () => 'rejected' as const }, limits: { cpuMs: 10, maxSubCalls: 0 }, sandbox: 'quickjs' }
    expect(configViolations(config)).toEqual([])
    expect(configViolations({})).toEqual([])
    expect(configViolations(Object.create(null))).toEqual([])
  })

  test('every problem is listed, each message naming its place', () => {
    expect(configViolations({ tool: [], tools: [echo, 'x'], setup: 1, sandbox: 'isolatedvm', limits: { memoryByte: 1, wallMs: 2 ** 31 } })).toEqual([
      { path: 'tool', message: 'unknown key "tool" (did you mean "tools"?)' },
      { path: 'tools[1]', message: 'tools[1] is not a tool (a string); make tools with defineTool' },
      { path: 'setup', message: 'setup must be a function (service) => { … }, not a number' },
      { path: 'limits.memoryByte', message: 'limits.memoryByte is not a limit (did you mean "memoryBytes"?)' },
      { path: 'limits.wallMs', message: 'limits.wallMs must be at most 2147483647 ms, not 2147483648' },
      { path: 'sandbox', message: 'sandbox must be one of "quickjs", "isolated-vm", not "isolatedvm" (did you mean "isolated-vm"?)' },
    ])
  })

  test('a default export that is not a plain object is one violation', () => {
    expect(messages(null)).toEqual(['the default export is null, not a config object; export default defineConfig({ … })'])
    expect(messages(new Map())).toEqual(['the default export is an object of a class, not a config object; export default defineConfig({ … })'])
    expect(messages(() => ({}))).toEqual(['the default export is a function, not a config object; export default defineConfig({ … })'])
  })

  test('a getter that throws is a violation, not an exception', () => {
    const hostile = Object.defineProperty({}, 'tools', {
      enumerable: true,
      get() {
        throw new Error('no tools for you')
      },
    })
    expect(messages(hostile)).toEqual(['the config cannot be read: no tools for you'])
  })
})

describe('suggestion', () => {
  test('names a candidate a few edits away, and nothing for a word far from all', () => {
    expect(suggestion('Sandbox', ['tools', 'sandbox'])).toBe(' (did you mean "sandbox"?)')
    expect(suggestion('aproval', ['tools', 'approval'])).toBe(' (did you mean "approval"?)')
    expect(suggestion('database', ['tools', 'setup'])).toBe('')
    expect(suggestion('x'.repeat(1000), ['tools'])).toBe('')
  })
})
