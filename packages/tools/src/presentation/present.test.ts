import { describe, expect, test } from 'vitest'
import { tool } from '../pipeline/fixtures/tool.js'
import { defineTool } from '../schema/define-tool.js'
import type { ToolResult } from '../types/tool.js'
import { presentCall, presentResult } from './present.js'
import type { ToolCallView, ToolResultView } from './types.js'

const result: ToolResult = { isError: false, content: [{ type: 'text', text: 'hello' }] }

describe('presentCall', () => {
  test("uses the tool's own view", () => {
    const view: ToolCallView = { card: 'terminal', title: 'ls -la', cwd: '/tmp' }
    expect(presentCall('shell', { cmd: 'ls' }, tool('shell', { presentCall: () => view }))).toBe(view)
  })

  test('falls back to the generic card without a definition, without a presenter, or when it returns undefined', () => {
    const generic = { card: 'generic', title: 'shell', rawInput: { cmd: 'ls' } }
    expect(presentCall('shell', { cmd: 'ls' })).toEqual(generic)
    expect(presentCall('shell', { cmd: 'ls' }, tool('shell'))).toEqual(generic)
    expect(presentCall('shell', { cmd: 'ls' }, tool('shell', { presentCall: () => undefined }))).toEqual(generic)
  })

  test('falls back to the generic card when the presenter throws', () => {
    const definition = tool('shell', {
      presentCall: () => {
        throw new Error('presenter bug')
      },
    })
    expect(presentCall('shell', { cmd: 'ls' }, definition)).toEqual({
      card: 'generic',
      title: 'shell',
      rawInput: { cmd: 'ls' },
    })
  })

  test('falls back to the generic card when the presenter throws something hostile', () => {
    const revocable = Proxy.revocable({}, {})
    revocable.revoke()
    const definition = tool('shell', {
      presentCall: () => {
        throw revocable.proxy
      },
    })
    expect(presentCall('shell', null, definition)).toEqual({ card: 'generic', title: 'shell', rawInput: null })
  })

  test('falls back to the generic card when the presenter returns something that is not a view', () => {
    const definition = tool('shell', { presentCall: () => 42 as unknown as ToolCallView })
    expect(presentCall('shell', {}, definition)).toEqual({ card: 'generic', title: 'shell', rawInput: {} })
    // A completed-only card is not a pending view.
    const searchCard = tool('grep', {
      presentCall: () =>
        ({ card: 'search', shape: 'paths', truncated: false, total: 0, paths: [] }) as unknown as ToolCallView,
    })
    expect(presentCall('grep', {}, searchCard)).toEqual({ card: 'generic', title: 'grep', rawInput: {} })
  })

  test('a defineTool presenter is called only with valid arguments', () => {
    const definition = defineTool({
      name: 'read',
      description: 'read a file',
      parameters: { path: { type: 'string', required: true } },
      output: { schema: { type: 'string' }, render: (_a, v) => [{ type: 'text', text: v }] },
      execute: async () => '',
      presentCall: (args) => ({
        card: 'generic',
        title: `Read ${args.path}`,
        kind: 'read',
        locations: [{ path: args.path }],
      }),
    })
    expect(presentCall('read', { path: 'a.ts' }, definition)).toEqual({
      card: 'generic',
      title: 'Read a.ts',
      kind: 'read',
      locations: [{ path: 'a.ts' }],
    })
    expect(presentCall('read', { path: 7 }, definition)).toEqual({
      card: 'generic',
      title: 'read',
      rawInput: { path: 7 },
    })
  })
})

describe('presentResult', () => {
  test("uses the tool's own view", () => {
    const view: ToolResultView = { card: 'terminal', output: 'hello', exitCode: 0 }
    expect(presentResult({}, result, tool('shell', { presentResult: () => view }))).toBe(view)
  })

  test('falls back to the generic card with the raw content', () => {
    const fallback = { card: 'generic', content: [{ type: 'text', text: 'hello' }] }
    expect(presentResult({}, result)).toEqual(fallback)
    expect(presentResult({}, result, tool('shell'))).toEqual(fallback)
    expect(presentResult({}, result, tool('shell', { presentResult: () => undefined }))).toEqual(fallback)
  })

  test('falls back to the generic card when the presenter throws', () => {
    const definition = tool('shell', {
      presentResult: () => {
        throw new Error('presenter bug')
      },
    })
    expect(presentResult({}, result, definition)).toEqual({
      card: 'generic',
      content: [{ type: 'text', text: 'hello' }],
    })
  })

  test('the generic content is a copy: changing it does not change the result', () => {
    const content = [{ type: 'text' as const, text: 'hello' }]
    const view = presentResult({}, { isError: false, content })
    if (view.card === 'generic') view.content?.push({ type: 'text', text: 'more' })
    expect(content).toHaveLength(1)
  })

  test('a failed result falls back to its error content', () => {
    const failed: ToolResult = {
      isError: true,
      content: [{ type: 'text', text: 'Error: boom' }],
      error: { message: 'boom' },
    }
    expect(presentResult({}, failed)).toEqual({ card: 'generic', content: [{ type: 'text', text: 'Error: boom' }] })
  })
})
