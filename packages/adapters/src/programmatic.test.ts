import { describe, expect, test } from 'vitest'
import type { ToolSchema } from '@ptc/tools'
import { anthropicTurns, ANTHROPIC_PROGRAM, openaiTurns, OPENAI_PROGRAM } from './fixtures/programmatic.js'
import { fromAnthropicToolUses, fromOpenAIResponsesOutput, toAnthropicTools, toOpenAIResponsesTools } from './index.js'

const schemas: ToolSchema[] = [
  {
    name: 'query_sales',
    description: 'Sales of a region.',
    parameters: {
      type: 'object',
      properties: { region: { type: 'string' } },
      required: ['region'],
      additionalProperties: false,
    },
  },
]

describe('programmatic tool calling: declaring tools', () => {
  test('Anthropic: allowed_callers on every tool when asked, none otherwise', () => {
    expect(toAnthropicTools(schemas, { allowedCallers: ['code_execution_20250825'] })[0]).toMatchObject({
      name: 'query_sales',
      allowed_callers: ['code_execution_20250825'],
    })
    expect(toAnthropicTools(schemas)[0]).not.toHaveProperty('allowed_callers')
  })

  test('OpenAI Responses: allowed_callers on every function when asked, none otherwise', () => {
    expect(toOpenAIResponsesTools(schemas, { allowedCallers: ['direct', 'programmatic'] })[0]).toMatchObject({
      name: 'query_sales',
      strict: true,
      allowed_callers: ['direct', 'programmatic'],
    })
    expect(toOpenAIResponsesTools(schemas)[0]).not.toHaveProperty('allowed_callers')
  })

  test('a caller list that is empty or names another API’s caller is refused, naming it', () => {
    expect(() => toAnthropicTools(schemas, { allowedCallers: [] })).toThrow(
      /allowedCallers must be a non-empty array of 'direct' or a code execution version/,
    )
    expect(() => toAnthropicTools(schemas, { allowedCallers: ['programmatic' as 'direct'] })).toThrow(
      /allowedCallers: "programmatic" is not 'direct' or a code execution version/,
    )
    expect(() => toOpenAIResponsesTools(schemas, { allowedCallers: ['code_execution_20250825' as 'direct'] })).toThrow(
      /allowedCallers: "code_execution_20250825" is not 'direct' or 'programmatic'/,
    )
  })
})

describe('programmatic tool calling: reading the calls', () => {
  test("Anthropic: a program's tool_use keeps its caller and the program's code; a direct one has none", () => {
    const first = fromAnthropicToolUses({ role: 'assistant', content: anthropicTurns[0]! })
    expect(first).toEqual([
      {
        type: 'tool_call',
        id: 'toolu_01',
        name: 'query_sales',
        arguments: '{"region":"west"}',
        caller: { type: 'code_execution_20250825', id: 'srvtoolu_01', code: ANTHROPIC_PROGRAM },
      },
      {
        type: 'tool_call',
        id: 'toolu_02',
        name: 'query_sales',
        arguments: '{"region":"east"}',
        caller: { type: 'code_execution_20250825', id: 'srvtoolu_01', code: ANTHROPIC_PROGRAM },
      },
    ])
    // A later response of the same program no longer carries its code.
    expect(fromAnthropicToolUses({ role: 'assistant', content: anthropicTurns[1]! })[0]?.caller).toEqual({
      type: 'code_execution_20250825',
      id: 'srvtoolu_01',
    })
    expect(fromAnthropicToolUses({ role: 'assistant', content: anthropicTurns[3]! })[0]).not.toHaveProperty('caller')
  })

  test('OpenAI Responses: a function_call from a program keeps its caller and the program item’s code; a direct one has none', () => {
    const [west] = fromOpenAIResponsesOutput(openaiTurns[0]!)
    expect(west).toEqual({
      type: 'tool_call',
      id: 'call_01',
      name: 'query_sales',
      arguments: '{"region":"west"}',
      caller: { type: 'program', id: 'call_prog_01', code: OPENAI_PROGRAM },
    })
    const [report, direct] = fromOpenAIResponsesOutput(openaiTurns[1]!)
    expect(report?.caller).toEqual({ type: 'program', id: 'call_prog_01' })
    expect(direct).not.toHaveProperty('caller')
  })

  test('a program caller without an id keeps an empty id, which the executor refuses as malformed', () => {
    const [call] = fromAnthropicToolUses({
      role: 'assistant',
      content: [
        { type: 'tool_use', id: 't', name: 'query_sales', input: {}, caller: { type: 'code_execution_20250825' } },
      ],
    })
    expect(call?.caller).toEqual({ type: 'code_execution_20250825', id: '' })
    const [other] = fromOpenAIResponsesOutput([
      { type: 'function_call', call_id: 'c', name: 'query_sales', arguments: '{}', caller: { type: 'program' } } as {
        type: string
      },
    ])
    expect(other?.caller).toEqual({ type: 'program', id: '' })
  })
})
