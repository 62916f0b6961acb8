export { toAiSdkTools, toModelOutput, type AiSdkTools, type PtcToolOutput, type ToAiSdkToolsOptions } from './ai-sdk/to-ai-sdk.js'
export { fromAiSdkTools, type FromAiSdkToolsOptions } from './ai-sdk/from-ai-sdk.js'
export { fromWireToolName, wireToolName, wireToolNames } from './shapes/names.js'
export { AdapterError, WireNameCollisionError, type AdapterErrorCode } from './errors.js'
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
} from './shapes/openai.js'
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
} from './shapes/anthropic.js'
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
} from './shapes/openai-responses.js'
