/**
 * `@ptc/adapters`: the Vercel AI SDK adapter (both ways; needs `ai` and `zod`) and, as in
 * `@ptc/adapters/shapes` (which needs neither), the OpenAI and Anthropic shapes.
 */
export {
  toAiSdkTools,
  toModelOutput,
  type AiSdkTools,
  type PtcToolOutput,
  type ToAiSdkToolsOptions,
} from './ai-sdk/to-ai-sdk.js'
export { fromAiSdkTools, type FromAiSdkToolsOptions } from './ai-sdk/from-ai-sdk.js'
export * from './shapes/index.js'
