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
  const anthropic: Anthropic.Messages.ToolUnion[] = toAnthropicTools(schemas, { allowedCallers: ['code_execution_20250825'] })
  const both: Anthropic.Messages.Tool[] = toAnthropicTools(schemas, { allowedCallers: ['direct', 'code_execution_20260120'] })
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
