import type { JsonValue } from '../json/types.js'
import type { ToolDispatchExecution, ToolExecution, ToolExecutionInput, ToolExecutionToken } from '../types/tool.js'

/** The frozen execution of a call: its identity, its snapshot arguments and a fresh token. */
export function execution(input: ToolExecutionInput, args: JsonValue): ToolExecution {
  const fields: { -readonly [K in keyof ToolExecution]: ToolExecution[K] } = {
    callId: input.callId,
    rootCallId: input.rootCallId ?? input.callId,
    name: input.name,
    arguments: args,
    signal: input.signal,
    token: Symbol(input.callId) as ToolExecutionToken,
  }
  if (input.schema !== undefined) fields.schema = input.schema
  if (input.agent !== undefined) fields.agent = input.agent
  if (input.toolSet !== undefined) fields.toolSet = input.toolSet
  if (input.parent !== undefined) fields.parent = input.parent
  return Object.freeze(fields)
}

/**
 * The around-dispatch view of a call: identity is read-only (the view is
 * frozen, so an assignment throws), only `signal` may be replaced, and only by
 * an `AbortSignal`. Built as one literal with an accessor: it is made per call.
 */
export function dispatchView(exec: ToolExecution): ToolDispatchExecution {
  let signal = exec.signal
  const view: { -readonly [K in keyof ToolDispatchExecution]: ToolDispatchExecution[K] } = {
    callId: exec.callId,
    rootCallId: exec.rootCallId,
    name: exec.name,
    arguments: exec.arguments,
    token: exec.token,
    get signal(): AbortSignal {
      return signal
    },
    set signal(next: AbortSignal) {
      if (!(next instanceof AbortSignal))
        throw new TypeError('a tools/execute wrapper may replace exec.signal only with an AbortSignal')
      signal = next
    },
  }
  if (exec.schema !== undefined) view.schema = exec.schema
  if (exec.agent !== undefined) view.agent = exec.agent
  if (exec.toolSet !== undefined) view.toolSet = exec.toolSet
  if (exec.parent !== undefined) view.parent = exec.parent
  return Object.freeze(view)
}
