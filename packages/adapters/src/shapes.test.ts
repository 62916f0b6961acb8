import type { ToolBatchResult } from '@ptc/tools'
import { describe, expect, test } from 'vitest'
import { thrownBy } from '../../../test/support/thrown.js'
import {
  AdapterError,
  fromWireToolName,
  fromAnthropicToolUses,
  fromOpenAIResponsesOutput,
  fromOpenAIToolCalls,
  strictCompatible,
  toAnthropicToolResults,
  toAnthropicTools,
  toOpenAIResponsesInput,
  toOpenAIResponsesTools,
  toOpenAIToolMessages,
  toOpenAITools,
  WireNameCollisionError,
} from './index.js'

const schemas = [
  {
    name: 'fs.read_file',
    description: 'Read.',
    parameters: { type: 'object' as const, properties: { path: { type: 'string' as const } } },
  },
]
const batch: ToolBatchResult = {
  results: [
    {
      callId: 'a',
      result: {
        isError: false,
        value: 'x',
        content: [
          { type: 'text', text: 'hello' },
          { type: 'image', mimeType: 'image/png', data: 'AAA' },
        ],
      },
    },
    {
      callId: 'b',
      result: { isError: true, error: { message: 'nope' }, content: [{ type: 'text', text: 'Error: nope' }] },
    },
  ],
  additionalContexts: [{ role: 'user', content: [{ type: 'text', text: 'later' }] }],
  concluded: false,
}

describe('OpenAI Chat Completions shapes', () => {
  test('tools get API-safe names, and tool calls map back to ptc names with the raw argument text', () => {
    expect(toOpenAITools(schemas)).toEqual([
      {
        type: 'function',
        function: { name: 'fs_read_file', description: 'Read.', parameters: schemas[0]?.parameters },
      },
    ])
    const calls = fromOpenAIToolCalls(
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'fs_read_file', arguments: '{"path":"/x"}' } }],
      },
      schemas.map((s) => s.name),
    )
    expect(calls).toEqual([{ type: 'tool_call', id: 'c1', name: 'fs.read_file', arguments: '{"path":"/x"}' }])
  })

  test('results become tool messages in call order; images and deferred contexts follow in a user message', () => {
    expect(toOpenAIToolMessages(batch)).toEqual([
      { role: 'tool', tool_call_id: 'a', content: 'hello\n[1 image(s) from this call follow in the next message]' },
      { role: 'tool', tool_call_id: 'b', content: 'Error: nope' },
      {
        role: 'user',
        content: [
          { type: 'image_url', image_url: { url: 'data:image/png;base64,AAA' } },
          { type: 'text', text: 'later' },
        ],
      },
    ])
  })
})

describe('Anthropic Messages shapes', () => {
  test('tools use input_schema, and tool_use blocks become tool calls', () => {
    expect(toAnthropicTools(schemas)).toEqual([
      { name: 'fs_read_file', description: 'Read.', input_schema: schemas[0]?.parameters },
    ])
    const calls = fromAnthropicToolUses(
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'let me look' },
          { type: 'tool_use', id: 'tu1', name: 'fs_read_file', input: { path: '/x' } },
        ],
      },
      ['fs.read_file'],
    )
    expect(calls).toEqual([{ type: 'tool_call', id: 'tu1', name: 'fs.read_file', arguments: '{"path":"/x"}' }])
  })

  test('results become tool_result blocks with is_error and image blocks, then the deferred contexts', () => {
    expect(toAnthropicToolResults(batch)).toEqual({
      role: 'user',
      content: [
        {
          type: 'tool_result',
          tool_use_id: 'a',
          content: [
            { type: 'text', text: 'hello' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAA' } },
          ],
        },
        { type: 'tool_result', tool_use_id: 'b', content: [{ type: 'text', text: 'Error: nope' }], is_error: true },
        { type: 'text', text: 'later' },
      ],
    })
  })
})

describe('wire names', () => {
  const named = (...names: string[]) =>
    names.map((name) => ({ name, description: name, parameters: { type: 'object' as const } }))

  test('two tools with the same wire name are refused for both providers, naming both tools and the wire name', () => {
    for (const declare of [toOpenAITools, toAnthropicTools]) {
      const error = thrownBy(() => declare(named('fs.read', 'other', 'fs_read')))
      expect(error).toBeInstanceOf(WireNameCollisionError)
      expect(error).toBeInstanceOf(AdapterError)
      expect(error).toMatchObject({
        code: 'WIRE_NAME_COLLISION',
        wireName: 'fs_read',
        toolNames: ['fs.read', 'fs_read'],
      })
      expect((error as Error).message).toBe(
        'tools "fs.read" and "fs_read" have the same provider name "fs_read" (names on the wire keep only A-Z, a-z, 0-9, _ and -, at most 64 characters): rename one of them',
      )
    }
  })

  test('names longer than 64 characters keep 55 and a hash of the whole name, so long names stay apart', () => {
    const long = 'x'.repeat(64)
    const wire = toOpenAITools(named(`${long}.a`, `${long}.b`)).map((t) => t.function.name)
    expect(wire.map((w) => w.length)).toEqual([64, 64])
    expect(wire[0]).toMatch(/^x{55}_[0-9a-f]{8}$/)
    expect(wire[0]).not.toBe(wire[1])
    expect(fromWireToolName(wire[1] as string, [`${long}.a`, `${long}.b`])).toBe(`${long}.b`)
    expect(toAnthropicTools(named('fs.read', 'fs.write', 'fs_list')).map((t) => t.name)).toEqual([
      'fs_read',
      'fs_write',
      'fs_list',
    ])
  })
})

describe('OpenAI Responses API shapes', () => {
  test('function tools carry API-safe names and strict exactly where the schema meets strict mode', () => {
    const closed = {
      type: 'object' as const,
      properties: { path: { type: 'string' as const } },
      required: ['path'],
      additionalProperties: false,
    }
    const tools = toOpenAIResponsesTools([
      { name: 'fs.read', description: 'Read.', parameters: closed },
      {
        name: 'fs.list',
        description: 'List.',
        parameters: { type: 'object', properties: { dir: { type: 'string' } } },
      },
    ])
    expect(tools).toEqual([
      { type: 'function', name: 'fs_read', description: 'Read.', parameters: closed, strict: true },
      {
        type: 'function',
        name: 'fs_list',
        description: 'List.',
        parameters: { type: 'object', properties: { dir: { type: 'string' } } },
        strict: false,
      },
    ])
  })

  test.each([
    [
      {
        type: 'object',
        properties: {
          a: {
            type: 'array',
            items: {
              type: 'object',
              properties: { b: { type: 'integer' } },
              required: ['b'],
              additionalProperties: false,
            },
          },
        },
        required: ['a'],
        additionalProperties: false,
      },
      true,
    ],
    [
      {
        type: 'object',
        properties: {
          a: {
            type: 'array',
            items: { type: 'object', properties: { b: { type: 'integer' } }, additionalProperties: false },
          },
        },
        required: ['a'],
        additionalProperties: false,
      },
      false,
    ],
    [
      {
        type: 'object',
        properties: { a: { type: 'string', minLength: 1 } },
        required: ['a'],
        additionalProperties: false,
      },
      false,
    ],
    [
      {
        type: 'object',
        properties: { a: { anyOf: [{ type: 'string' }, { type: 'null' }] } },
        required: ['a'],
        additionalProperties: false,
      },
      true,
    ],
  ])('strictCompatible(%j) is %s', (schema, strict) => {
    expect(strictCompatible(schema)).toBe(strict)
  })

  test('function_call items become calls by call_id with names mapped back; other output items are ignored', () => {
    const output = [
      { type: 'reasoning', id: 'rs_1' },
      { type: 'function_call', id: 'fc_1', call_id: 'call_a', name: 'fs_read_file', arguments: '{"path":"/x"}' },
      { type: 'message', id: 'msg_1' },
    ]
    expect(fromOpenAIResponsesOutput(output, ['fs.read_file'])).toEqual([
      { type: 'tool_call', id: 'call_a', name: 'fs.read_file', arguments: '{"path":"/x"}' },
    ])
  })

  test('results become function_call_output items in call order (text, or text and image parts); deferred contexts a user message', () => {
    expect(toOpenAIResponsesInput(batch)).toEqual([
      {
        type: 'function_call_output',
        call_id: 'a',
        output: [
          { type: 'input_text', text: 'hello' },
          { type: 'input_image', image_url: 'data:image/png;base64,AAA', detail: 'auto' },
        ],
      },
      { type: 'function_call_output', call_id: 'b', output: 'Error: nope' },
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'later' }] },
    ])
  })
})

describe('SDK message shapes', () => {
  test('a Chat Completions custom tool call becomes a call with its raw input (the pipeline then refuses it)', () => {
    const calls = fromOpenAIToolCalls({
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'c9', type: 'custom', custom: { name: 'grammar', input: 'free text' } }],
    })
    expect(calls).toEqual([{ type: 'tool_call', id: 'c9', name: 'grammar', arguments: 'free text' }])
  })

  test('an image of a type the Messages API does not take is named in a text block instead', () => {
    const bmp: ToolBatchResult = {
      results: [
        {
          callId: 'x',
          result: { isError: false, value: null, content: [{ type: 'image', mimeType: 'image/bmp', data: 'Qk0=' }] },
        },
      ],
      additionalContexts: [],
      concluded: false,
    }
    expect(toAnthropicToolResults(bmp).content).toEqual([
      {
        type: 'tool_result',
        tool_use_id: 'x',
        content: [
          {
            type: 'text',
            text: '[an image of type image/bmp was left out: the Messages API takes JPEG, PNG, GIF or WebP]',
          },
        ],
      },
    ])
  })
})
