import type { ToolBatchResult } from '@ptc/tools'
import { describe, expect, test } from 'vitest'
import { AdapterError, fromAnthropicToolUses, fromOpenAIToolCalls, toAnthropicToolResults, toAnthropicTools, toOpenAIToolMessages, toOpenAITools, WireNameCollisionError } from './index.js'

const schemas = [{ name: 'fs.read_file', description: 'Read.', parameters: { type: 'object' as const, properties: { path: { type: 'string' as const } } } }]
const batch: ToolBatchResult = {
  results: [
    { callId: 'a', result: { isError: false, value: 'x', content: [{ type: 'text', text: 'hello' }, { type: 'image', mimeType: 'image/png', data: 'AAA' }] } },
    { callId: 'b', result: { isError: true, error: { message: 'nope' }, content: [{ type: 'text', text: 'Error: nope' }] } },
  ],
  additionalContexts: [{ role: 'user', content: [{ type: 'text', text: 'later' }] }],
  concluded: false,
}

describe('OpenAI Chat Completions shapes', () => {
  test('tools get API-safe names, and tool calls map back to ptc names with the raw argument text', () => {
    expect(toOpenAITools(schemas)).toEqual([{ type: 'function', function: { name: 'fs_read_file', description: 'Read.', parameters: schemas[0]?.parameters } }])
    const calls = fromOpenAIToolCalls(
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'fs_read_file', arguments: '{"path":"/x"}' } }] },
      schemas.map((s) => s.name),
    )
    expect(calls).toEqual([{ type: 'tool_call', id: 'c1', name: 'fs.read_file', arguments: '{"path":"/x"}' }])
  })

  test('results become tool messages in call order; images and deferred contexts follow in a user message', () => {
    expect(toOpenAIToolMessages(batch)).toEqual([
      { role: 'tool', tool_call_id: 'a', content: 'hello\n[1 image(s) from this call follow in the next message]' },
      { role: 'tool', tool_call_id: 'b', content: 'Error: nope' },
      { role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,AAA' } }, { type: 'text', text: 'later' }] },
    ])
  })
})

describe('Anthropic Messages shapes', () => {
  test('tools use input_schema, and tool_use blocks become tool calls', () => {
    expect(toAnthropicTools(schemas)).toEqual([{ name: 'fs_read_file', description: 'Read.', input_schema: schemas[0]?.parameters }])
    const calls = fromAnthropicToolUses(
      { role: 'assistant', content: [{ type: 'text', text: 'let me look' }, { type: 'tool_use', id: 'tu1', name: 'fs_read_file', input: { path: '/x' } }] },
      ['fs.read_file'],
    )
    expect(calls).toEqual([{ type: 'tool_call', id: 'tu1', name: 'fs.read_file', arguments: '{"path":"/x"}' }])
  })

  test('results become tool_result blocks with is_error and image blocks, then the deferred contexts', () => {
    expect(toAnthropicToolResults(batch)).toEqual({
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'a', content: [{ type: 'text', text: 'hello' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAA' } }] },
        { type: 'tool_result', tool_use_id: 'b', content: [{ type: 'text', text: 'Error: nope' }], is_error: true },
        { type: 'text', text: 'later' },
      ],
    })
  })
})

describe('wire names', () => {
  const named = (...names: string[]) => names.map((name) => ({ name, description: name, parameters: { type: 'object' as const } }))

  test('two tools with the same wire name are refused for both providers, naming both tools and the wire name', () => {
    for (const declare of [toOpenAITools, toAnthropicTools]) {
      const error = thrown(() => declare(named('fs.read', 'other', 'fs_read')))
      expect(error).toBeInstanceOf(WireNameCollisionError)
      expect(error).toBeInstanceOf(AdapterError)
      expect(error).toMatchObject({ code: 'WIRE_NAME_COLLISION', wireName: 'fs_read', toolNames: ['fs.read', 'fs_read'] })
      expect((error as Error).message).toBe(
        'tools "fs.read" and "fs_read" have the same provider name "fs_read" (names on the wire keep only A-Z, a-z, 0-9, _ and -, at most 64 characters): rename one of them',
      )
    }
  })

  test('names that differ only past 64 characters collide too; distinct names pass', () => {
    const long = 'x'.repeat(64)
    expect(() => toOpenAITools(named(`${long}.a`, `${long}.b`))).toThrow(WireNameCollisionError)
    expect(toAnthropicTools(named('fs.read', 'fs.write', 'fs_list')).map((t) => t.name)).toEqual(['fs_read', 'fs_write', 'fs_list'])
  })
})

function thrown(f: () => unknown): unknown {
  try {
    f()
  } catch (error) {
    return error
  }
  throw new Error('did not throw')
}
