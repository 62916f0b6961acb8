/**
 * `@ptc/adapters/shapes`: the OpenAI (Chat Completions, Responses) and Anthropic Messages shapes, with no
 * runtime dependency: neither `ai` nor `zod` (which the AI SDK adapter of the root entry needs) nor the
 * providers' SDKs, whose types these shapes are checked against.
 */
export { fromWireToolName, wireToolName, wireToolNames } from './names.js'
export { AdapterError, WireNameCollisionError, type AdapterErrorCode } from '../errors.js'
export type { DeferralOptions } from './deferral.js'
export {
  fromOpenAIToolCalls,
  toOpenAITools,
  toOpenAIToolMessages,
  type OpenAIAssistantMessage,
  type OpenAITool,
  type OpenAIToolCall,
  type OpenAIToolMessage,
  type OpenAIUserContentPart,
  type OpenAIUserMessage,
} from './openai.js'
export {
  fromAnthropicToolUses,
  toAnthropicToolResults,
  toAnthropicTools,
  type AnthropicAllowedCaller,
  type AnthropicAssistantMessage,
  type AnthropicServerToolUseBlock,
  type AnthropicImageMediaType,
  type AnthropicImageBlock,
  type AnthropicTextBlock,
  type AnthropicTool,
  type AnthropicToolResultBlock,
  type AnthropicToolResultMessage,
  type AnthropicToolSearch,
  type AnthropicToolSearchTool,
  type AnthropicToolUseBlock,
  type AnthropicToolsOptions,
} from './anthropic.js'
export {
  fromOpenAIResponsesOutput,
  strictCompatible,
  toOpenAIResponsesInput,
  toOpenAIResponsesTools,
  type OpenAIResponsesAllowedCaller,
  type OpenAIResponsesCarriedType,
  type OpenAIResponsesFunctionCall,
  type OpenAIResponsesFunctionCallOutput,
  type OpenAIResponsesInputOptions,
  type OpenAIResponsesOutputPart,
  type OpenAIResponsesProgram,
  type OpenAIResponsesTool,
  type OpenAIResponsesToolSearchTool,
  type OpenAIResponsesToolsOptions,
  type OpenAIResponsesUserMessage,
} from './openai-responses.js'
