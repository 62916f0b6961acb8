import { describeThrown } from '../errors.js'
import type { PreToolDecision } from '../types/decisions.js'
import type { ToolExecution } from '../types/execution.js'
import type { ApprovalService } from '../types/scope.js'

/** Validate a pre-execute decision; anything malformed fails closed with a clear error. */
export function normalizePreDecision(raw: unknown): PreToolDecision {
  if (typeof raw === 'object' && raw !== null) {
    const d = raw as Record<string, unknown>
    switch (d.kind) {
      case 'allow':
        return { kind: 'allow' }
      case 'cancel':
        return { kind: 'cancel' }
      case 'deny':
        if (typeof d.reason === 'string') return raw as PreToolDecision
        throw new TypeError('a deny decision needs a string `reason`')
      case 'ask':
        return raw as PreToolDecision
    }
  }
  throw new TypeError('a tools/pre-execute listener returned something that is not a decision (allow, deny, cancel or ask)')
}

/**
 * Run an `ask` through the approval service. Returns undefined when the
 * service answered `allowed-once`, else the denial reason. Without an agent or
 * a service the call is denied.
 */
export async function decideApproval(
  service: ApprovalService | undefined,
  exec: ToolExecution,
  decision: Extract<PreToolDecision, { kind: 'ask' }>,
): Promise<string | undefined> {
  const why = decision.reason === undefined ? '' : ` (${decision.reason})`
  if (exec.agent === undefined) return `approval required${why}, but the call has no agent to ask on behalf of`
  if (service === undefined) return `approval required${why}, but no approval service is available`
  let outcome: unknown
  try {
    outcome = await service.request({
      exec,
      signal: exec.signal,
      ...(decision.reason !== undefined && { reason: decision.reason }),
      ...(decision.displayReason !== undefined && { displayReason: decision.displayReason }),
    })
  } catch (error) {
    return `approval failed${why}: ${describeThrown(error)}`
  }
  switch (outcome) {
    case 'allowed-once':
      return undefined
    case 'rejected':
      return `the user rejected this call${why}`
    case 'cancelled':
      return `the approval request was cancelled${why}`
    case 'unavailable':
      return `approval is unavailable${why}`
    default:
      return `the approval service gave no valid answer${why}`
  }
}
