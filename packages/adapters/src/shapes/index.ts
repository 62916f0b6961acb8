/**
 * `@ptc/adapters/shapes`: the OpenAI (Chat Completions, Responses) and Anthropic Messages shapes, with no
 * runtime dependency: neither `ai` nor `zod` (which the AI SDK adapter of the root entry needs) nor the
 * providers' SDKs, whose types these shapes are checked against.
 */
export { fromWireToolName, wireToolName, wireToolNames } from './names.js'
export { AdapterError, WireNameCollisionError, type AdapterErrorCode } from '../errors.js'
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
  type AnthropicToolUseBlock,
  type AnthropicToolsOptions,
} from './anthropic.js'
export {
  fromOpenAIResponsesOutput,
  strictCompatible,
  toOpenAIResponsesInput,
  toOpenAIResponsesTools,
  type OpenAIResponsesAllowedCaller,
  type OpenAIResponsesFunctionCall,
  type OpenAIResponsesFunctionCallOutput,
  type OpenAIResponsesOutputPart,
  type OpenAIResponsesProgram,
  type OpenAIResponsesTool,
  type OpenAIResponsesToolsOptions,
  type OpenAIResponsesUserMessage,
} from './openai-responses.js'
