/**
 * A held state opened by the runtime and checked for this resume: the decisions fit the calls it waits on, it
 * names its `run_code` call, and the agent resuming it is the one it ran for. A refusal puts a taken state back.
 */
import type { CodeRuntime } from '@ptc/sandbox'
import type { SuspendedRun } from '@ptc/sandbox/session'
import type { ApprovalDecision, ToolResumeInput } from '@ptc/tools'
import type { ResumeError } from '../errors.js'
import { decisionsFor } from './decisions.js'
import type { HeldState } from './held-state.js'
import { namesItsCall, type RunIdentity } from './identity.js'
import * as refusals from './refusals.js'

/** A suspended run ready to go on. */
export interface OpenedRun {
  readonly run: SuspendedRun
  readonly identity: RunIdentity
  readonly decisions: ApprovalDecision[]
  /** When its state expires, as it says (a state stored before it was kept says nothing). */
  readonly expiresAt: unknown
}

export async function openChecked(held: HeldState, input: ToolResumeInput, runtime: CodeRuntime): Promise<OpenedRun> {
  const { token } = held
  let run: SuspendedRun
  try {
    run = await (runtime.openRun as NonNullable<CodeRuntime['openRun']>)(token, held.bytes)
  } catch (error) {
    return await held.refuse(refusals.stateRefused(token, error))
  }
  const identity = run.data as Partial<RunIdentity> | undefined
  const expiresAt = identity?.expiresAt
  let decisions: ApprovalDecision[]
  try {
    decisions = decisionsFor(input.decision, run.parked.length)
  } catch (error) {
    return await held.refuse(error as ResumeError, expiresAt)
  }
  if (!namesItsCall(identity)) return await held.refuse(refusals.namesNoCall(token), expiresAt)
  const agent = input.agent?.id ?? null
  if (agent !== (identity.agent ?? null))
    return await held.refuse(refusals.wrongAgent(token, identity.agent, agent), expiresAt)
  return { run, identity, decisions, expiresAt }
}
