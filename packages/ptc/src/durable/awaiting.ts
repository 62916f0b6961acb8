/**
 * The calls a suspended program waits on: as its parked calls carry them, as the log records them, as its
 * `run_code` value returns them.
 */
import type { JsonValue } from '@ptc/sandbox'
import type { ParkedCall } from '@ptc/sandbox/session'
import type { DisplayReason } from '@ptc/tools'
import type { AwaitedCall } from '../dispatch-log.js'

/** What a suspended program's `run_code` value carries: its token and the calls waiting for approval. */
export interface AwaitingApproval {
  token: string
  /** `reason` and `displayReason`: the ask decision's (`displayReason` localized, for a person). */
  calls: { tool: string; arguments: JsonValue; reason?: string; displayReason?: DisplayReason }[]
}

/** One call a suspended program waits on. */
export interface WaitingCall {
  readonly tool: string
  readonly arguments: JsonValue
  readonly reason?: string
  readonly displayReason?: DisplayReason
  readonly subCallId?: string
}

/** The calls a suspended run parked, with what the scheduler gave `parkCall` about each. */
export function waitingCalls(parked: readonly ParkedCall[]): WaitingCall[] {
  return parked.map((call) => {
    const detail = call.detail as { subCallId?: string; reason?: string; displayReason?: DisplayReason } | undefined
    const displayReason = detail?.displayReason
    return {
      tool: call.name,
      arguments: call.args,
      ...(typeof detail?.reason === 'string' && { reason: detail.reason }),
      ...(typeof displayReason === 'object' &&
        displayReason !== null &&
        typeof displayReason.en === 'string' && { displayReason }),
      ...(typeof detail?.subCallId === 'string' && { subCallId: detail.subCallId }),
    }
  })
}

/** The calls as the log's `tool/ptc-suspend` records them. */
export function awaitedInLog(calls: readonly WaitingCall[]): AwaitedCall[] {
  return calls.map(({ tool, arguments: args, reason, displayReason, subCallId }) => ({
    name: tool,
    arguments: args,
    ...(reason !== undefined && { reason }),
    ...(displayReason !== undefined && { displayReason }),
    ...(subCallId !== undefined && { subCallId }),
  }))
}

/** The `awaiting` of the program suspended under `token`. */
export function awaitingApproval(token: string, calls: readonly WaitingCall[]): AwaitingApproval {
  return {
    token,
    calls: calls.map(({ tool, arguments: args, reason, displayReason }) => ({
      tool,
      arguments: args,
      ...(reason !== undefined && { reason }),
      ...(displayReason !== undefined && { displayReason }),
    })),
  }
}
