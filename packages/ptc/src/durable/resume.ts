/**
 * `ToolsService.resume({ token, decision })`: the suspended program's state is claimed, read and checked, and
 * its program goes on where it waited, the calls it waited on made again with the decision.
 */
import type { ToolBatchResult } from '@ptc/tools'
import { holdingOf, readState, type HeldState } from './held-state.js'
import { claimResume, leases, releaseLease, type Lease } from './lease.js'
import { openChecked } from './open.js'
import type { DurableParts } from './parts.js'
import * as refusals from './refusals.js'
import { runResumed, type ResumeCall } from './resumed-run.js'

export async function resume(parts: DurableParts, call: ResumeCall): Promise<ToolBatchResult> {
  const { input, config } = call
  const { token } = input
  if (parts.resuming.has(token)) throw refusals.resumingHere(token)
  parts.resuming.add(token)
  let lease: Lease | undefined
  let held: HeldState | undefined
  try {
    if (leases(parts.store)) lease = await claimResume(parts, token, config.maxTimeoutMs, input.signal)
    held = await readState(parts, token, holdingOf(parts.store, lease !== undefined), input.signal)
    const opened = await openChecked(held, input, config.runtime)
    await held.removeIfRead()
    return await runResumed(parts, call, opened, held)
  } finally {
    parts.resuming.delete(token)
    if (lease !== undefined) await releaseLease(parts, lease, held?.late)
  }
}
