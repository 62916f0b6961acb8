import type { ListenerList } from '../events/listeners.js'
import { runWaterfall } from '../events/waterfall.js'
import { deferredApprovalRejected, THROWN_IN } from '../messages.js'
import type { ApprovalService } from '../types/approval.js'
import type { PreToolDecision } from '../types/decisions.js'
import type { ToolsEvents } from '../types/events.js'
import type { ToolExecution, ToolExecutionResult } from '../types/tool.js'
import { aborted, type DispatchHooks } from './call-state.js'
import { decideApproval, normalizePreDecision } from './decisions.js'
import type { Guards } from './guards.js'
import { failureResult, thrownResult } from './results.js'

/** The decision when no `tools/pre-execute` listener objects. */
export const allow = (): PreToolDecision => ({ kind: 'allow' })

/** Whether a call may run: the `tools/pre-execute` waterfall, the approval it asks for, and the guards. */
export class Admission {
  readonly #preExecute: ListenerList<ToolsEvents['tools/pre-execute']>
  readonly #guards: Guards
  readonly #approval: () => ApprovalService | undefined

  constructor(
    preExecute: ListenerList<ToolsEvents['tools/pre-execute']>,
    guards: Guards,
    approval: () => ApprovalService | undefined,
  ) {
    this.#preExecute = preExecute
    this.#guards = guards
    this.#approval = approval
  }

  /**
   * pre-execute waterfall, approval, cancellation recheck, guards. Undefined: allowed. A promise only when a
   * listener or approval ran.
   */
  admit(
    exec: ToolExecution,
    hooks: DispatchHooks,
  ): ToolExecutionResult | undefined | Promise<ToolExecutionResult | undefined> {
    const listeners = this.#preExecute.for(exec.agent)
    if (listeners.length === 0) return this.#decide(exec, allow(), hooks)
    return runWaterfall(listeners, [exec] as const, allow).then(
      (raw) => {
        let decision: PreToolDecision
        try {
          decision = normalizePreDecision(raw)
        } catch (error) {
          return thrownResult(error, THROWN_IN.preExecute)
        }
        return this.#decide(exec, decision, hooks)
      },
      (error: unknown) => thrownResult(error, THROWN_IN.preExecute),
    )
  }

  /**
   * Applies a pre-execute decision: deny, cancel, ask (approval; none when the caller had the call
   * `approved`), then the cancellation recheck and guards.
   */
  #decide(
    exec: ToolExecution,
    decision: PreToolDecision,
    hooks: DispatchHooks,
  ): ToolExecutionResult | undefined | Promise<ToolExecutionResult | undefined> {
    if (decision.kind === 'deny') return failureResult('DENIED', decision.reason, decision.info)
    if (decision.kind === 'cancel') return aborted(false)
    if (decision.kind === 'ask' && !hooks.approved) {
      if (hooks.decision === 'rejected') {
        return failureResult('DENIED', deferredApprovalRejected(decision.reason))
      }
      if (hooks.decision === 'allowed-once') return this.#guard(exec)
      return decideApproval(this.#approval(), exec, decision, hooks.deferrable).then((refusal) => {
        if (typeof refusal === 'object') {
          if (exec.signal.aborted) return aborted(false)
          const info = {
            name: 'ToolApprovalDeferredError',
            code: 'APPROVAL_DEFERRED',
            ...(decision.reason !== undefined && { reason: decision.reason }),
            ...(decision.displayReason !== undefined && { displayReason: decision.displayReason }),
          }
          return failureResult('APPROVAL_DEFERRED', refusal.deferred, info)
        }
        if (refusal !== undefined) return exec.signal.aborted ? aborted(false) : failureResult('DENIED', refusal)
        return this.#guard(exec)
      })
    }
    return this.#guard(exec)
  }

  /** The cancellation recheck and the guards. */
  #guard(exec: ToolExecution): ToolExecutionResult | undefined {
    if (exec.signal.aborted) return aborted(false)
    const reason = this.#guards.check(exec)
    return reason === undefined ? undefined : failureResult('DENIED', reason)
  }
}
