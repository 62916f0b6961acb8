/**
 * The bound on a sandbox runtime's answer: `run_code` (and `tools.resume` of a durable run) never waits for a
 * runtime longer than a run's wall and a grace after it.
 */
import { MAX_TIMER_MS, type CodeRunResult } from '@ptc/sandbox'
import { within } from './long-runs.js'

/**
 * How long past a run's wall limit `run_code` waits for the runtime's answer before it gives the run up: this
 * much, or the wall again when that is longer. ptc's backends answer by the wall (the conformance suite holds
 * them to it: a run waiting for an engine counts its wait, a guest that ignores the limit is killed); a
 * runtime that does not (a fault of a third-party backend, or of one of ours) must not hold `run_code`, and
 * the agent's turn with it, forever.
 */
export const RUNTIME_ANSWER_GRACE_MS = 5_000

/**
 * The runtime's result, or, when it has not come `wallMs` and the grace after the run started, a `timeout`
 * failure that says the runtime did not answer (`giveUp` is told; the run's late result is dropped). The timer
 * keeps the process alive as the run would: a pending `run_code` always ends.
 */
export async function answered(
  running: Promise<CodeRunResult>,
  wallMs: number,
  runtime: string,
  giveUp: (why: Error) => void = () => undefined,
): Promise<CodeRunResult> {
  const graceMs = Math.max(RUNTIME_ANSWER_GRACE_MS, wallMs)
  const started = Date.now()
  const result = await within(running, Math.min(MAX_TIMER_MS, wallMs + graceMs))
  if (result !== undefined) return result
  const message =
    `the run did not end by its wall limit (at most ${wallMs} ms): the ${runtime} sandbox runtime had ` +
    `not answered ${graceMs} ms after that, and the run was given up`
  giveUp(new Error(message))
  return {
    logs: [],
    error: { kind: 'timeout', message },
    stats: { cpuMs: 0, wallMs: Date.now() - started, queueMs: 0, subCalls: 0 },
  }
}
