import type Anthropic from '@anthropic-ai/sdk'
import type OpenAI from 'openai'
import { createNativeExecutor, ToolsService, type ToolBatchResult, type ToolCallBlock } from '@ptc/tools'
import { describe, expect, test } from 'vitest'
import { thrownBy } from '../../../test/support/thrown.js'
import {
  anthropicFailedSearchTurn,
  anthropicSearchTurn,
  openaiClientSearchCall,
  openaiSearchOutput,
  searchTools,
  weatherFunction,
} from './fixtures/tool-search.js'
import {
  fromAnthropicToolUses,
  fromOpenAIResponsesOutput,
  toAnthropicToolResults,
  toAnthropicTools,
  toOpenAIResponsesInput,
  toOpenAIResponsesTools,
  WireNameCollisionError,
} from './index.js'

interface Registry {
  readonly tools: ToolsService
  readonly names: string[]
  run(calls: ToolCallBlock[]): Promise<ToolBatchResult>
}

function registry(): Registry {
  const tools = new ToolsService()
  for (const definition of searchTools()) tools.register(definition)
  tools.setExecutor(createNativeExecutor())
  const names = tools.schemas().map((s) => s.name)
  return { tools, names, run: (calls) => tools.execute({ calls, signal: AbortSignal.timeout(10_000) }) }
}

const schemas = () => registry().tools.schemas()
const PARIS = '{"city":"Paris"}'

describe('Anthropic tool search: a conversation round trip', () => {
  test('declares deferred tools and the search tool; search blocks are no calls; the deferred call runs', async () => {
    const { tools, names, run } = registry()
    const [notes, weather] = tools.schemas()
    const { description, parameters } = weather ?? {}
    expect(toAnthropicTools(tools.schemas(), { deferLoading: true, alwaysLoaded: ['notes.read'] })).toEqual([
      { name: 'notes_read', description: notes?.description, input_schema: notes?.parameters },
      { name: 'weather_current', description, input_schema: parameters, defer_loading: true },
      { type: 'tool_search_tool_bm25_20251119', name: 'tool_search_tool_bm25' },
    ])
    const calls = fromAnthropicToolUses({ role: 'assistant', content: anthropicSearchTurn }, names)
    expect(calls).toEqual([{ type: 'tool_call', id: 'toolu_01', name: 'weather.current', arguments: PARIS }])
    const results = toAnthropicToolResults(await run(calls))
    expect(results).toEqual({
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: 'toolu_01', content: [{ type: 'text', text: 'Paris: 21°C' }] }],
    })
    // The next request sends the turn back whole, its search blocks included, then the results.
    const messages: Anthropic.Messages.MessageParam[] = [
      { role: 'user', content: 'Weather in Paris?' },
      { role: 'assistant', content: anthropicSearchTurn },
      results,
    ]
    expect(messages).toHaveLength(3)
  })

  test('a failed search loads nothing: no calls', () => {
    expect(fromAnthropicToolUses({ role: 'assistant', content: anthropicFailedSearchTurn })).toEqual([])
  })

  test('regex search, a predicate, or toolSearch: false (your own search) decide what is appended', () => {
    const weatherOnly = (name: string) => name.startsWith('weather.')
    const regex = toAnthropicTools(schemas(), { deferLoading: weatherOnly, toolSearch: 'regex' })
    expect(regex.map((t) => [t.name, 'defer_loading' in t])).toEqual([
      ['notes_read', false],
      ['weather_current', true],
      ['tool_search_tool_regex', false],
    ])
    const own = toAnthropicTools(schemas(), { deferLoading: true, toolSearch: false })
    expect(own.map((t) => t.name)).toEqual(['notes_read', 'weather_current'])
    const bm25 = { type: 'tool_search_tool_bm25_20251119', name: 'tool_search_tool_bm25' }
    expect(toAnthropicTools(schemas(), { toolSearch: 'bm25' }).at(-1)).toEqual(bm25)
  })
})

describe('OpenAI Responses tool search: a conversation round trip', () => {
  test('deferred functions and the search are declared; its items are no calls; the deferred call runs', async () => {
    const { tools, names, run } = registry()
    const declared = toOpenAIResponsesTools(tools.schemas(), { deferLoading: (name) => name.startsWith('weather.') })
    expect(declared.map((t) => ('name' in t ? [t.name, t.defer_loading] : [t.type]))).toEqual([
      ['notes_read', undefined],
      ['weather_current', true],
      ['tool_search'],
    ])
    // The search loads the function as it was declared.
    expect(declared[1]).toEqual(weatherFunction)
    const calls = fromOpenAIResponsesOutput(openaiSearchOutput, names)
    expect(calls).toEqual([{ type: 'tool_call', id: 'call_01', name: 'weather.current', arguments: PARIS }])
    const batch = await run(calls)
    const answer = { type: 'function_call_output', call_id: 'call_01', output: 'Paris: 21°C' }
    // With previous_response_id the API keeps the search's items: only the outputs are sent.
    expect(toOpenAIResponsesInput(batch)).toEqual([answer])
    // Without it the response's items come first: the loaded function is defined only in tool_search_output.
    const input: OpenAI.Responses.ResponseInputItem[] = toOpenAIResponsesInput(batch, { output: openaiSearchOutput })
    expect(input).toEqual([...openaiSearchOutput, answer])
  })

  test('a client-executed search call is no ptc call; items a next request does not repeat are left out', async () => {
    expect(fromOpenAIResponsesOutput([openaiClientSearchCall])).toEqual([])
    const batch = await registry().run([])
    const output = [
      { type: 'web_search_call', id: 'ws_1' },
      { type: 'reasoning', id: 'rs_1' },
    ]
    expect(toOpenAIResponsesInput(batch, { output })).toEqual([{ type: 'reasoning', id: 'rs_1' }])
  })

  test('toolSearch: true appends the search tool with nothing deferred; false leaves it out', () => {
    expect(toOpenAIResponsesTools(schemas(), { toolSearch: true }).at(-1)).toEqual({ type: 'tool_search' })
    const own = toOpenAIResponsesTools(schemas(), { deferLoading: true, toolSearch: false })
    expect(own.map((t) => t.type)).toEqual(['function', 'function'])
  })
})

describe('deferral options', () => {
  test('without them, or deferring nothing, the tools are declared exactly as before', () => {
    const nothing = [
      { deferLoading: false },
      { deferLoading: () => false },
      { deferLoading: true, alwaysLoaded: ['notes.read', 'weather.current'] },
    ]
    for (const options of nothing) {
      expect(toAnthropicTools(schemas(), options)).toEqual(toAnthropicTools(schemas()))
      expect(toOpenAIResponsesTools(schemas(), options)).toEqual(toOpenAIResponsesTools(schemas()))
    }
  })

  test('a malformed option is refused, naming what to change', () => {
    for (const declare of [toAnthropicTools, toOpenAIResponsesTools] as Array<(s: unknown, o: unknown) => unknown>) {
      expect(() => declare(schemas(), { deferLoading: 'yes' })).toThrow(
        'deferLoading must be true, false or a function of a tool name, not "yes"',
      )
      expect(() => declare(schemas(), { deferLoading: true, alwaysLoaded: 'notes.read' })).toThrow(
        'alwaysLoaded must be an array of tool names (strings), not "notes.read"',
      )
    }
    expect(() => toAnthropicTools(schemas(), { deferLoading: true, toolSearch: 'semantic' as 'bm25' })).toThrow(
      "toolSearch must be 'bm25', 'regex' or false, not \"semantic\"",
    )
    expect(() => toOpenAIResponsesTools(schemas(), { toolSearch: 'bm25' as never })).toThrow(
      'toolSearch must be true or false, not "bm25"',
    )
    const empty: ToolBatchResult = { results: [], additionalContexts: [], concluded: false }
    expect(() => toOpenAIResponsesInput(empty, { output: 'x' as never })).toThrow(
      `output must be a response's output items (an array), not "x"`,
    )
  })

  test("a tool named as Anthropic's search tool is refused when the search tool is appended", () => {
    const clash = [{ name: 'tool_search_tool_bm25', description: 'mine', parameters: { type: 'object' as const } }]
    expect(toAnthropicTools(clash)).toHaveLength(1)
    const error = thrownBy(() => toAnthropicTools(clash, { toolSearch: 'bm25' }))
    expect(error).toBeInstanceOf(WireNameCollisionError)
    const name = 'tool_search_tool_bm25'
    expect(error).toMatchObject({ code: 'WIRE_NAME_COLLISION', wireName: name, toolNames: [name, name] })
    expect((error as Error).message).toBe(
      'tool "tool_search_tool_bm25" has the provider name "tool_search_tool_bm25", which ' +
        "Anthropic's tool search tool (toolSearch: 'bm25') takes: rename the tool",
    )
  })
})
