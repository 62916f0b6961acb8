import { describeThrown } from '../errors.js'
import type { PreToolDecision } from '../types/decisions.js'
import type { ToolErrorInfo, ToolExecution } from '../types/tool.js'
import type { ApprovalService, DisplayReason } from '../types/approval.js'

/** Validate a pre-execute decision; anything malformed fails closed with a clear error. */
export function normalizePreDecision(raw: unknown): PreToolDecision {
  if (typeof raw === 'object' && raw !== null) {
    const d = raw as Record<string, unknown>
    switch (d.kind) {
      case 'allow':
        return { kind: 'allow' }
      case 'cancel':
        return { kind: 'cancel' }
      case 'deny': {
        // Read each field once and return a fresh decision: a getter cannot change what was checked.
        const reason = d.reason
        if (typeof reason !== 'string') throw new TypeError('a deny decision needs a string `reason`')
        const info = d.info
        if (info === undefined) return { kind: 'deny', reason }
        return { kind: 'deny', reason, info: normalizeInfo(info) }
      }
      case 'ask': {
        const reason = d.reason
        const displayReason = d.displayReason
        if (reason !== undefined && typeof reason !== 'string')
          throw new TypeError('an ask decision `reason` must be a string')
        if (
          displayReason !== undefined &&
          (typeof displayReason !== 'object' ||
            displayReason === null ||
            typeof (displayReason as Record<string, unknown>).en !== 'string')
        ) {
          throw new TypeError('an ask decision `displayReason` must be { en: string, … }')
        }
        return {
          kind: 'ask',
          ...(reason !== undefined && { reason }),
          ...(displayReason !== undefined && { displayReason: displayReason as DisplayReason }),
        }
      }
    }
  }
  throw new TypeError(
    'a tools/pre-execute listener returned something that is not a decision (allow, deny, cancel or ask)',
  )
}

function normalizeInfo(raw: unknown): ToolErrorInfo {
  const info = typeof raw === 'object' && raw !== null ? (raw as Record<string, unknown>) : undefined
  const name = info?.name
  const code = info?.code
  const reason = info?.reason
  if (typeof name !== 'string' || typeof code !== 'string' || (reason !== undefined && typeof reason !== 'string')) {
    throw new TypeError('a deny decision `info` must be { name: string, code: string, reason?: string }')
  }
  return { name, code, ...(reason !== undefined && { reason }) }
}

/** An approval service's answer and who gave it, from a bare answer or an `ApprovalVerdict`. */
function verdictOf(outcome: unknown): { answer: unknown; by: string | undefined } {
  if (typeof outcome !== 'object' || outcome === null) return { answer: outcome, by: undefined }
  const { outcome: answer, by } = outcome as { outcome?: unknown; by?: unknown }
  const named = typeof by === 'string' && by.trim() !== '' ? by.trim().slice(0, 200) : undefined
  return { answer, by: named }
}

/**
 * Run an `ask` through the approval service. Returns undefined when the
 * service answered `allowed-once`, `{ deferred }` (its message) when it answered `deferred` and the
 * caller can wait (`deferrable`), else the denial reason. Without an agent or a service the call is denied.
 */
export async function decideApproval(
  service: ApprovalService | undefined,
  exec: ToolExecution,
  decision: Extract<PreToolDecision, { kind: 'ask' }>,
  deferrable = false,
): Promise<string | undefined | { deferred: string }> {
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
  const { answer, by } = verdictOf(outcome)
  switch (answer) {
    case 'allowed-once':
      return undefined
    case 'rejected':
      // The service may be code (a config's) or a person behind it: say who decided when it says, else what answered.
      return `${by ?? 'the approval service'} rejected this call${why}`
    case 'cancelled':
      return `the approval request was cancelled${why}`
    case 'unavailable':
      return `approval is unavailable${why}`
    case 'deferred':
      return deferrable
        ? { deferred: `approval of this call was deferred${why}: the program waits for the decision` }
        : `approval was deferred${why}, but this call cannot wait for a later decision (only a sub-call of a ` +
            `durable run_code program can)`
    default:
      return `the approval service gave no valid answer${why}`
  }
}
