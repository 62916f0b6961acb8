/** The decisions a resume gives the calls a program waits on: one for all, or one per call in their order. */
import type { ApprovalDecision, ToolResumeInput } from '@ptc/tools'
import * as refusals from './refusals.js'

export function decisionsFor(decision: ToolResumeInput['decision'], parked: number): ApprovalDecision[] {
  const ok = (d: unknown): d is ApprovalDecision => d === 'allowed-once' || d === 'rejected'
  if (ok(decision)) return Array.from({ length: parked }, () => decision)
  if (Array.isArray(decision) && decision.every(ok)) {
    if (decision.length !== parked) throw refusals.decisionCount(parked, decision.length)
    return [...decision]
  }
  throw refusals.notADecision(decision)
}
