import type { Registration } from '../registry/registration.js'
import type { UserMessage } from '../types/content.js'
import type { ToolDefinition, ToolExecution, ToolExecutionResult } from '../types/tool.js'
import type { ApprovalDecision } from '../types/approval.js'
import { CALL_ABORTED, CALL_ABORTED_BEFORE_DISPATCH, THROWN_IN } from '../messages.js'
import { failureResult, thrownResult } from './results.js'

/** The executor's notifications of one call (a throw from one is caught), and how its approval goes. */
export interface DispatchHooks {
  readonly onPolicySettled: (() => void) | undefined
  readonly onBodyAborted: ((reason: unknown) => void) | undefined
  /** The caller already had the call approved: an `ask` needs no approval service (model-direct calls only). */
  readonly approved: boolean
  /** A deferred approval becomes an `APPROVAL_DEFERRED` failure rather than a denial. */
  readonly deferrable: boolean
  /** The approval decided later, for a call whose approval was deferred. */
  readonly decision: ApprovalDecision | undefined
  /** `ToolDispatchOptions.maxValueChars`. */
  readonly maxValueChars: number | undefined
}

/**
 * The registration a call runs against, with the content callbacks read once when the call starts (the
 * seed: they are captured at call start), so a definition changed while the body runs does not change how
 * this call's content is projected or finalized.
 */
export interface CallRegistration {
  readonly reg: Registration
  readonly projectContent: ToolDefinition['projectContent']
  readonly finalizeContent: ToolDefinition['finalizeContent']
}

/** Per-call mutable state owned by the pipeline (never exposed as such). */
export interface CallState {
  contexts: UserMessage[]
  concluded: boolean
  settled: boolean
  bodyInvoked: boolean
  /** The body's own result object: a wrapper returning it unchanged needs no re-check. */
  bodyResult?: ToolExecutionResult
  /** The executor's notification (a throw from it is caught) that the body's signal aborted. */
  readonly onBodyAborted: ((reason: unknown) => void) | undefined
  /** The longest JSON text a value of this call may have (`ToolDispatchOptions.maxValueChars`). */
  readonly maxValueChars: number | undefined
}

/** Read the content callbacks of the registration a call starts with, once. */
export function startCall(reg: Registration): CallRegistration {
  const { projectContent, finalizeContent } = reg.definition
  return { reg, projectContent, finalizeContent }
}

/** `projectContent`, captured at call start, for an outcome entering post-execute. */
export function project(call: CallRegistration, exec: ToolExecution, result: ToolExecutionResult): ToolExecutionResult {
  const projectContent = call.projectContent
  if (projectContent === undefined) return result
  try {
    const content = projectContent.call(call.reg.definition, exec, Object.freeze({ ...result }))
    return content === undefined ? result : { ...result, content }
  } catch (error) {
    return thrownResult(error, THROWN_IN.projectContent)
  }
}

/** The result with the messages the body deferred (`deferContext`) before its own. */
export function withContexts(result: ToolExecutionResult, state: CallState): ToolExecutionResult {
  if (state.contexts.length === 0) return result
  return { ...result, additionalContexts: [...state.contexts, ...(result.additionalContexts ?? [])] }
}

/** The failure of an aborted call: after its body was invoked, or before it was dispatched. */
export function aborted(bodyInvoked: boolean): ToolExecutionResult {
  return bodyInvoked
    ? failureResult('ABORTED', CALL_ABORTED)
    : failureResult('ABORTED_BEFORE_DISPATCH', CALL_ABORTED_BEFORE_DISPATCH)
}
