/**
 * The sentences this package tells the model (a failed call's message), in one place so they can be read
 * together. Each failure's text is `Error: <message>` (`failureResult`).
 */

// --- A call the pipeline refused or ended ---

/** A call names no tool the caller may run. */
export function unknownTool(name: string): string {
  return `unknown tool: ${name}`
}

/** A model-direct call, in code-only mode, names a tool that only programs reach (through `transport`). */
export function programOnlyTool(name: string, transport: string): string {
  return (
    `unknown tool: ${name}; in this mode ${name} is reachable only from a program: call ` +
    `tools[${JSON.stringify(name)}](…) inside ${transport}`
  )
}

/** The tool a call started with was gone when its body was to run. */
export function toolGoneBeforeCall(name: string): string {
  return `unknown tool: ${name} (it was removed, replaced or restricted before the call started)`
}

/** The arguments could not be snapshot as JSON (`why`: the snapshot's message). */
export function argumentsNotLossless(why: string): string {
  return `arguments are not lossless JSON: ${why}`
}

/** The decision on a deferred approval rejected the call (`reason`: the policy's, when it gave one). */
export function deferredApprovalRejected(reason: string | undefined): string {
  const why = reason === undefined ? '' : ` (${reason})`
  return `the decision on its deferred approval rejected this call${why}`
}

/** The call was aborted while or after its body ran. */
export const CALL_ABORTED = 'the tool call was aborted'
/** The call was aborted before its body ran. */
export const CALL_ABORTED_BEFORE_DISPATCH = 'the tool call was aborted before it was dispatched'

/** What a failure's message says before what was thrown (`thrownResult`): which stage threw. */
export const THROWN_IN = {
  definition: 'the tool definition could not be read: ',
  pipeline: 'the tool pipeline failed: ',
  executeWrapper: 'a tools/execute wrapper failed: ',
  preExecute: 'a tools/pre-execute listener failed: ',
  postExecute: 'a tools/post-execute listener failed: ',
  postDecision: 'a tools/post-execute decision could not be read: ',
  finalizeContent: 'finalizeContent failed: ',
  projectContent: 'projectContent failed: ',
} as const
