/**
 * What a durable run's state carries besides the engine's, sealed with it: the `run_code` call it belongs to,
 * the agent that may resume it, and when it expires.
 */
import type { JsonValue } from '@ptc/sandbox'
import type { ToolRunContext } from '@ptc/tools'
import type { SubCallNumbering } from '../scheduler/sub-call.js'

export interface RunIdentity {
  callId: string
  rootCallId: string
  /** Sub-call ids used so far. */
  subCalls: number
  /** The id of the agent the program ran for (null: none): only that agent may resume it. */
  agent: string | null
  /**
   * The `run_code` call's arguments (absent in states suspended before they were kept: `{}`), for the listeners
   * of its resumed result.
   */
  arguments?: JsonValue
  /**
   * When the stored state expires (ms since the epoch; absent in states stored before it was kept): a refused
   * resume puts the state back until then, not for a new TTL.
   */
  expiresAt?: number
}

/** The identity of `ctx`'s run, sealed as it suspends: its state is kept for `ttlMs` from now. */
export function sealedIdentity(
  ctx: Pick<ToolRunContext, 'callId' | 'rootCallId' | 'arguments'>,
  agent: string | null,
  numbering: SubCallNumbering,
  ttlMs: number,
): JsonValue {
  return {
    callId: ctx.callId,
    rootCallId: ctx.rootCallId,
    subCalls: numbering.count,
    agent,
    arguments: ctx.arguments,
    expiresAt: Date.now() + ttlMs,
  } satisfies RunIdentity
}

/** Whether an opened state's data names the `run_code` call it belongs to. */
export function namesItsCall(identity: Partial<RunIdentity> | undefined): identity is RunIdentity {
  return (
    typeof identity?.callId === 'string' &&
    typeof identity.rootCallId === 'string' &&
    Number.isSafeInteger(identity.subCalls)
  )
}
