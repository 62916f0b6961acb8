/**
 * A durable run suspends: it is given a token and the identity sealed with its state (`beginRun`); once it
 * suspended, its state goes to the store and the log records the suspension (`storeSuspension`); its
 * `run_code` value is then the calls it waits on, or the failure that lost it (`awaitingValue`).
 */
import type { CodeRunResult, JsonValue } from '@ptc/sandbox'
import type { DurableRun } from '@ptc/sandbox/session'
import type { ToolRunContext } from '@ptc/tools'
import type { LogFailure } from '@ptc/tools/executor'
import type { DispatchLog } from '../dispatch-log.js'
import { CodeRunFailedError } from '../errors.js'
import * as messages from '../messages.js'
import type { SubCallNumbering } from '../scheduler/sub-call.js'
import { awaitedInLog, awaitingApproval, waitingCalls } from './awaiting.js'
import { sealedIdentity } from './identity.js'
import { bounded, type DurableParts } from './parts.js'
import { newToken } from './token.js'

const SWEEP_EVERY_MS = 10 * 60_000

/**
 * The `durable` of a run for `ctx`'s call: a fresh token its suspension is stored (and sealed) under,
 * with the call's ids and how many sub-call ids it used (a resumed program numbers on from there).
 */
export function beginRun(
  parts: DurableParts,
  ctx: Pick<ToolRunContext, 'callId' | 'rootCallId' | 'agent' | 'arguments'>,
  numbering: SubCallNumbering,
): DurableRun {
  const agent = ctx.agent?.id ?? null
  return {
    key: newToken(),
    // Sealed as the run suspends, just before the store is given the state for ttlMs.
    data: () => sealedIdentity(ctx, agent, numbering, parts.ttlMs),
    // A program in a sandbox session holds it as long as its state may be resumed.
    holdMs: parts.ttlMs,
  }
}

/**
 * A run ended: when it suspended, its state goes to the store under `key` and the log records the suspension
 * (`awaitingValue` then gives the value `run_code` returns). Never throws: a store failure is kept for
 * `awaitingValue`, which the result reports. Resolves the log's drain once it recorded the suspension (the
 * first event the session did not take, if any); undefined when the run did not suspend.
 */
export async function storeSuspension(
  parts: DurableParts,
  run: CodeRunResult,
  key: string,
  log: DispatchLog,
): Promise<LogFailure | undefined> {
  const suspended = run.suspended
  if (suspended === undefined) return undefined
  const calls = waitingCalls(suspended.parked)
  try {
    const stored = await bounded(parts, parts.store.set(key, suspended.state, { ttlMs: parts.ttlMs }))
    if (!stored.ok) throw new Error(messages.storeDidNotAnswer(parts.storeWaitMs))
  } catch (error) {
    parts.awaiting.set(run, error instanceof Error ? error : new Error(String(error)))
    // Nobody can resume it: the sandbox session it held (if any) goes on from its state before the program.
    await dropRun(parts, key, suspended.state)
    return undefined
  }
  sweepNowAndThen(parts)
  log.suspended(key, awaitedInLog(calls))
  const logFailure = await log.drain()
  parts.awaiting.set(run, awaitingApproval(key, calls))
  return logFailure
}

/** The value of a suspended run (`storeSuspension` stored it), or the failure that lost it. */
export function awaitingValue(
  parts: DurableParts,
  run: CodeRunResult,
  logs: string[] = run.logs,
): JsonValue | undefined {
  if (run.suspended === undefined) return undefined
  const awaiting = parts.awaiting.get(run)
  if (awaiting === undefined || awaiting instanceof Error) {
    // The store's message reaches the model: a store may put anything in it.
    const why = awaiting === undefined ? messages.NOT_STORED : messages.cut(awaiting.message, 300)
    throw new CodeRunFailedError('abort', messages.suspendedStateLost(why), logs)
  }
  // A program in a sandbox session: the model learns that the session waits for it.
  const notice = run.session?.note
  return { logs, awaiting: awaiting as unknown as JsonValue, ...(notice !== undefined && { session: notice }) }
}

/** States nobody resumed expire; a store that does not drop them itself is swept now and then (best effort). */
function sweepNowAndThen(parts: DurableParts): void {
  if (parts.store.sweep !== undefined && Date.now() - parts.sweptAt >= SWEEP_EVERY_MS) {
    parts.sweptAt = Date.now()
    void parts.store.sweep().catch(() => undefined)
  }
}

/** Drops the suspended run in `state` (see `CodeRuntime.dropRun`); best effort, at most `storeWaitMs`. */
async function dropRun(parts: DurableParts, key: string, state: Uint8Array): Promise<void> {
  const runtime = parts.runtime
  if (runtime.dropRun === undefined || runtime.openRun === undefined) return
  const drop = runtime.dropRun.bind(runtime)
  await bounded(
    parts,
    runtime.openRun(key, state).then((opened) => drop(opened)),
  ).catch(() => undefined)
}
