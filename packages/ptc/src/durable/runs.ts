/**
 * Durable approval (`PtcExecutorOptions.durable`): a `run_code` sub-call whose approval the approval
 * service defers (`deferred`) parks; once the program waits on nothing else, the run suspends (QuickJS:
 * its engine memory and counters, sealed by the runtime), its state goes to the store under a fresh
 * token, and `run_code` returns `awaiting: { token, calls }`. `ToolsService.resume({ token, decision })`
 * — here or in another process with the same store and runtime secret — opens the state, dispatches
 * the parked calls again with the decision, and lets the program go on where it waited.
 */
import type { CodeRunResult, CodeRuntime, JsonValue } from '@ptc/sandbox'
import type { DurableRun } from '@ptc/sandbox/session'
import type {
  ToolBatchResult,
  ToolExecutionResult,
  ToolExecutorServices,
  ToolResumeInput,
  ToolRunContext,
} from '@ptc/tools'
import type { LogFailure } from '@ptc/tools/executor'
import type { DispatchLog } from '../dispatch-log.js'
import type { RunConfig } from '../run-setup.js'
import type { SubCallNumbering } from '../scheduler/sub-call.js'
import { durableParts, type DurableOptions } from './options.js'
import type { DurableParts } from './parts.js'
import { resume } from './resume.js'
import { awaitingValue, beginRun, storeSuspension } from './suspend.js'

/** One executor's durable approval: its store and runtime, and the runs this process suspends and resumes. */
export class DurableRuns {
  readonly #parts: DurableParts

  constructor(options: DurableOptions, runtime: CodeRuntime) {
    this.#parts = durableParts(options, runtime)
  }

  /** The `durable` of a run for `ctx`'s call (see `beginRun`). */
  begin(
    ctx: Pick<ToolRunContext, 'callId' | 'rootCallId' | 'agent' | 'arguments'>,
    numbering: SubCallNumbering,
  ): DurableRun {
    return beginRun(this.#parts, ctx, numbering)
  }

  /** A run ended: a suspended one's state is stored under `key` (see `storeSuspension`). */
  suspended(run: CodeRunResult, key: string, log: DispatchLog): Promise<LogFailure | undefined> {
    return storeSuspension(this.#parts, run, key, log)
  }

  /** The value of a suspended run, or the failure that lost it; undefined for a run that did not suspend. */
  awaitingOf(run: CodeRunResult, logs?: string[]): JsonValue | undefined {
    return awaitingValue(this.#parts, run, logs)
  }

  /** `ToolsService.resume`: see the module's comment. */
  resume(
    input: ToolResumeInput,
    services: ToolExecutorServices,
    config: RunConfig,
    content: (value: JsonValue) => ToolExecutionResult['content'],
  ): Promise<ToolBatchResult> {
    return resume(this.#parts, { input, services, config, content })
  }
}
