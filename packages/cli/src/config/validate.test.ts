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
    const config = {
      tools: [echo],
      setup: () => undefined,
      approval: { request: async () => 'rejected' as const },
      limits: { cpuMs: 10, maxSubCalls: 0 },
      sandbox: 'quickjs',
    }
    expect(configViolations(config)).toEqual([])
    expect(configViolations({})).toEqual([])
    expect(configViolations(Object.create(null))).toEqual([])
  })

  test('every problem is listed, each message naming its place', () => {
    expect(
      configViolations({
        tool: [],
        tools: [echo, 'x'],
        setup: 1,
        sandbox: 'isolatedvm',
        limits: { memoryByte: 1, wallMs: 2 ** 31 },
      }),
    ).toEqual([
      { path: 'tool', message: 'unknown key "tool" (did you mean "tools"?)' },
      { path: 'tools[1]', message: 'tools[1] is not a tool (a string); make tools with defineTool' },
      { path: 'setup', message: 'setup must be a function (service) => { … }, not a number' },
      { path: 'limits.memoryByte', message: 'limits.memoryByte is not a limit (did you mean "memoryBytes"?)' },
      { path: 'limits.wallMs', message: 'limits.wallMs must be at most 2147483647 ms, not 2147483648' },
      {
        path: 'sandbox',
        message: 'sandbox must be one of "quickjs", "isolated-vm", not "isolatedvm" (did you mean "isolated-vm"?)',
      },
    ])
  })

  test('discovery: false or { budgetChars, alwaysLoaded }; each wrong value named by its place', () => {
    expect(configViolations({ discovery: false })).toEqual([])
    expect(configViolations({ discovery: {} })).toEqual([])
    expect(configViolations({ discovery: { budgetChars: 4000, alwaysLoaded: ['echo'] } })).toEqual([])
    expect(messages({ discovery: true })).toEqual([
      'discovery must be false or { budgetChars?, alwaysLoaded? }, not a boolean (omit it: discovery is on by default)',
    ])
    expect(messages({ discovery: 'off' })).toEqual([
      'discovery must be false or { budgetChars?, alwaysLoaded? }, not a string',
    ])
    expect(configViolations({ discovery: { budgetChar: 10, budgetChars: 0, alwaysLoaded: ['echo', '', 3] } })).toEqual([
      {
        path: 'discovery.budgetChar',
        message: 'discovery.budgetChar is not a discovery setting (did you mean "budgetChars"?)',
      },
      {
        path: 'discovery.budgetChars',
        message: 'discovery.budgetChars must be a positive whole number of characters, not 0',
      },
      { path: 'discovery.alwaysLoaded[1]', message: 'discovery.alwaysLoaded[1] must be a tool name, not ""' },
      { path: 'discovery.alwaysLoaded[2]', message: 'discovery.alwaysLoaded[2] must be a tool name, not a number' },
    ])
    expect(messages({ discovery: { budgetChars: 1.5, alwaysLoaded: 'echo' } })).toEqual([
      'discovery.budgetChars must be a positive whole number of characters, not 1.5',
      'discovery.alwaysLoaded must be an array of tool names, not a string',
    ])
    expect(messages({ discovry: false })).toEqual(['unknown key "discovry" (did you mean "discovery"?)'])
  })

  test('a default export that is not a plain object is one violation', () => {
    expect(messages(null)).toEqual([
      'the default export is null, not a config object; export default defineConfig({ … })',
    ])
    expect(messages(new Map())).toEqual([
      'the default export is an object of a class, not a config object; export default defineConfig({ … })',
    ])
    expect(messages(() => ({}))).toEqual([
      'the default export is a function, not a config object; export default defineConfig({ … })',
    ])
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
