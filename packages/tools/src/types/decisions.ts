import type { JsonValue } from '../json/types.js'
import type { ContentBlock, UserMessage } from './content.js'
import type { ToolErrorInfo, ToolExecution } from './tool.js'
import type { DisplayReason } from './approval.js'

/** Pre-dispatch decision. Arguments cannot be rewritten. */
export type PreToolDecision =
  | { kind: 'allow' }
  | { kind: 'deny'; reason: string; info?: ToolErrorInfo }
  | { kind: 'cancel' }
  | { kind: 'ask'; reason?: string; displayReason?: DisplayReason }

/** Post-dispatch decision: accept (optionally replacing content OR value), or block. */
export type PostToolDecision =
  | { kind: 'accept'; content?: ContentBlock[]; value?: never; additionalContexts?: UserMessage[] }
  | { kind: 'accept'; value: JsonValue; content?: never; additionalContexts?: UserMessage[] }
  | { kind: 'block'; feedback: ContentBlock[]; additionalContexts?: UserMessage[] }

/** A monotonic final denial: a reason denies, `undefined` leaves the call as it is. */
export type ToolGuard = (execution: Readonly<ToolExecution>) => string | undefined
