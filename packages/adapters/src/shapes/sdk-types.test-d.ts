/**
 * The shapes against the providers' own SDK types (dev dependencies): what ptc produces is accepted by the
 * SDK's request types, and what the SDK returns is accepted by ptc, with no cast.
 */
import type Anthropic from '@anthropic-ai/sdk'
import type OpenAI from 'openai'
import type { ToolBatchResult, ToolSchema } from '@ptc/tools'
import { expectTypeOf, test } from 'vitest'
import {
  fromAnthropicToolUses,
  fromOpenAIResponsesOutput,
  fromOpenAIToolCalls,
  toAnthropicToolResults,
  toAnthropicTools,
  toOpenAIResponsesInput,
  toOpenAIResponsesTools,
  toOpenAIToolMessages,
  toOpenAITools,
  type AnthropicTool,
  type AnthropicToolSearchTool,
  type OpenAIResponsesTool,
  type OpenAIResponsesToolSearchTool,
} from '../index.js'

declare const schemas: ToolSchema[]
declare const batch: ToolBatchResult

test('Chat Completions: tools and tool messages are request params; an SDK assistant message gives the calls', () => {
  const tools: OpenAI.Chat.Completions.ChatCompletionTool[] = toOpenAITools(schemas)
  const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = toOpenAIToolMessages(batch)
  const completion = {} as OpenAI.Chat.Completions.ChatCompletion
  const message = completion.choices[0]!.message
  expectTypeOf(fromOpenAIToolCalls(message)).toBeArray()
  expectTypeOf(tools).toBeArray()
  expectTypeOf(messages).toBeArray()
})

test('Anthropic Messages: tools and the tool-result message are request params; an SDK message gives the calls', () => {
  const tools: Anthropic.Messages.ToolUnion[] = toAnthropicTools(schemas)
  const next: Anthropic.Messages.MessageParam = toAnthropicToolResults(batch)
  const message = {} as Anthropic.Messages.Message
  expectTypeOf(fromAnthropicToolUses(message)).toBeArray()
  expectTypeOf(tools).toBeArray()
  expectTypeOf(next).toBeObject()
})

test('Responses API: function tools and the output items are request params; an SDK response gives the calls', () => {
  const tools: OpenAI.Responses.Tool[] = toOpenAIResponsesTools(schemas)
  const input: OpenAI.Responses.ResponseInputItem[] = toOpenAIResponsesInput(batch)
  const params: OpenAI.Responses.ResponseCreateParamsNonStreaming = { model: 'm', tools, input }
  const response = {} as OpenAI.Responses.Response
  expectTypeOf(fromOpenAIResponsesOutput(response.output)).toBeArray()
  expectTypeOf(params).toBeObject()
})

test('programmatic tool calling: tools with allowed_callers are request params of both APIs', () => {
  const anthropic: Anthropic.Messages.ToolUnion[] = toAnthropicTools(schemas, {
    allowedCallers: ['code_execution_20250825'],
  })
  const both: Anthropic.Messages.Tool[] = toAnthropicTools(schemas, {
    allowedCallers: ['direct', 'code_execution_20260120'],
  })
  const openai: OpenAI.Responses.Tool[] = toOpenAIResponsesTools(schemas, { allowedCallers: ['programmatic'] })
  const request: Anthropic.Messages.MessageCreateParamsNonStreaming = {
    model: 'm',
    max_tokens: 1,
    messages: [],
    tools: [{ type: 'code_execution_20250825', name: 'code_execution' }, ...anthropic],
  }
  // A caller the SDK does not know is refused at compile time.
  // @ts-expect-error: not a caller of the Messages API
  toAnthropicTools(schemas, { allowedCallers: ['programmatic'] })
  // @ts-expect-error: not a caller of the Responses API
  toOpenAIResponsesTools(schemas, { allowedCallers: ['code_execution_20250825'] })
  expectTypeOf(both).toBeArray()
  expectTypeOf(openai).toBeArray()
  expectTypeOf(request).toBeObject()
})

test('tool search: deferred tools and the search tool are request params of both APIs', () => {
  const deferred = { deferLoading: true, alwaysLoaded: ['a'] }
  const anthropic: Anthropic.Messages.ToolUnion[] = toAnthropicTools(schemas, deferred)
  const regex: Anthropic.Messages.ToolUnion[] = toAnthropicTools(schemas, {
    deferLoading: (name) => name !== 'a',
    toolSearch: 'regex',
    allowedCallers: ['direct'],
  })
  const openai: OpenAI.Responses.Tool[] = toOpenAIResponsesTools(schemas, deferred)
  const request: OpenAI.Responses.ResponseCreateParamsNonStreaming = { model: 'm', tools: openai, input: 'hi' }
  // The search tool's variant is in the type; with none appended, the client tools' type is kept.
  type Regex = Array<AnthropicTool<never> | AnthropicToolSearchTool<'regex'>>
  expectTypeOf(toAnthropicTools(schemas, { deferLoading: true, toolSearch: 'regex' })).toEqualTypeOf<Regex>()
  type Bm25 = Array<AnthropicTool<never> | AnthropicToolSearchTool<'bm25'>>
  expectTypeOf(toAnthropicTools(schemas, { deferLoading: true })).toEqualTypeOf<Bm25>()
  expectTypeOf(toAnthropicTools(schemas)).toEqualTypeOf<Array<AnthropicTool<never>>>()
  const clientOnly: Anthropic.Messages.Tool[] = toAnthropicTools(schemas, { deferLoading: true, toolSearch: false })
  type WithSearch = Array<OpenAIResponsesTool | OpenAIResponsesToolSearchTool>
  expectTypeOf(toOpenAIResponsesTools(schemas, { deferLoading: true })).toEqualTypeOf<WithSearch>()
  const functions: OpenAI.Responses.FunctionTool[] = toOpenAIResponsesTools(schemas, { allowedCallers: ['direct'] })
  // @ts-expect-error: not a tool search of the Messages API
  toAnthropicTools(schemas, { deferLoading: true, toolSearch: 'semantic' })
  // @ts-expect-error: the Responses API has one tool search
  toOpenAIResponsesTools(schemas, { deferLoading: true, toolSearch: 'bm25' })
  expectTypeOf([anthropic, regex, clientOnly, functions]).toBeArray()
  expectTypeOf(request).toBeObject()
})

test("tool search: an SDK response's search blocks and items are read; the next request takes them back", () => {
  const message = {} as Anthropic.Messages.Message
  expectTypeOf(fromAnthropicToolUses(message)).toBeArray()
  // The Messages API keeps no state: the turn goes back whole (its search blocks too), then the results.
  const messages: Anthropic.Messages.MessageParam[] = [message, toAnthropicToolResults(batch)]
  const response = {} as OpenAI.Responses.Response
  expectTypeOf(fromOpenAIResponsesOutput(response.output)).toBeArray()
  // Without previous_response_id: the response's items (tool_search_call, tool_search_output, …), then the outputs.
  const input: OpenAI.Responses.ResponseInputItem[] = toOpenAIResponsesInput(batch, { output: response.output })
  const next: OpenAI.Responses.ResponseCreateParamsNonStreaming = { model: 'm', input, store: false }
  expectTypeOf(messages).toBeArray()
  expectTypeOf(next).toBeObject()
})
