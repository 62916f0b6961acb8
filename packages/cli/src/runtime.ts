import {
  DEFAULT_LIMITS,
  type CodeRunLimits,
  type CodeRunRequest,
  type CodeRunResult,
  type CodeRuntime,
} from '@ptc/sandbox'
import type { ResumeRunRequest, SuspendedRun } from '@ptc/sandbox/session'
import type { QuickJSSessionOptions } from '@ptc/sandbox-quickjs'
import { CliError, firstLine } from './errors.js'

export const SANDBOXES = ['quickjs', 'isolated-vm'] as const
export type SandboxName = (typeof SANDBOXES)[number]

const KIB = 1024

/**
 * The limits of every run of `ptc run` and `ptc serve` unless a config file or a flag says otherwise. What a run
 * prints goes to a model, so they are tighter than the sandbox's own defaults (`DEFAULT_LIMITS`, sized for a
 * library): 1 MiB of output is some 250 000 tokens, more than most context windows.
 */
export const CLI_DEFAULT_LIMITS: Readonly<CodeRunLimits> = Object.freeze({
  // Guest execution only (waiting on tools is not charged): shaping tool results takes milliseconds, so 10 s of
  // pure computation is a runaway loop, stopped before the model has waited half a minute for it.
  cpuMs: 10_000,
  // Under the 60 s an MCP client waits for a tool call by default (the MCP TypeScript SDK's request timeout):
  // the model gets the sandbox's timeout message with the logs so far, not a transport error. Room for a few
  // sequential slow tools.
  wallMs: 45_000,
  // As the sandbox: tool results are meant to stay in the sandbox, and memory costs the host, not the context.
  memoryBytes: DEFAULT_LIMITS.memoryBytes,
  // Logs + value, what the model reads: about 8 000 tokens (~4 bytes a token), near the 30 000 characters agent
  // harnesses commonly keep of one tool result. A run past it fails with output-limit (keeping a fitting
  // prefix of its logs), which tells the model to print less.
  maxOutputBytes: 32 * KIB,
  // Each sub-call reaches a real tool (a service, a quota): a fan-out over a few hundred items fits, a loop
  // that never stops calling ends at 1 000 calls instead of 10 000.
  maxSubCalls: 1_000,
  // As the sandbox: calls waiting for a free parallel slot cost the host only.
  maxPendingSubCalls: DEFAULT_LIMITS.maxPendingSubCalls,
  // As the sandbox: the program text, 1 MiB.
  maxProgramBytes: DEFAULT_LIMITS.maxProgramBytes,
  // As the sandbox: one tool result of 16 Mi characters, about a second of the host thread at most.
  maxResultChars: DEFAULT_LIMITS.maxResultChars,
  // As the sandbox: one call's arguments of 16 Mi characters, as much host work as a result's.
  maxArgumentChars: DEFAULT_LIMITS.maxArgumentChars,
})

/**
 * The limits a run uses: the CLI's defaults, then a config file's limits, then the flags (later ones win; an absent or
 * `undefined` limit keeps the one before).
 */
export function mergeLimits(config?: Partial<CodeRunLimits>, flags?: Partial<CodeRunLimits>): CodeRunLimits {
  const merged: CodeRunLimits = { ...CLI_DEFAULT_LIMITS }
  for (const layer of [config, flags]) {
    for (const [key, value] of Object.entries(layer ?? {}) as [keyof CodeRunLimits, number | undefined][]) {
      if (value !== undefined) merged[key] = value
    }
  }
  return merged
}

/**
 * Concurrency-safe sub-calls of one run that may overlap: the PTC executor's default, said here so the usage can show
 * it.
 */
export const CLI_DEFAULT_MAX_PARALLEL = 10

/**
 * What a run keeps across processes: sandbox sessions (`--session-state`), or suspended programs' secret (`--approve
 * defer`).
 */
export interface RuntimeState {
  readonly sessions?: QuickJSSessionOptions | undefined
  /**
   * The key that authenticates suspended programs, QuickJS only (a session's secret serves them when there are
   * sessions).
   */
  readonly secret?: Buffer | undefined
}

/**
 * Starts the chosen backend (loaded on demand, so QuickJS runs never load the
 * native addon). A backend that cannot start here is a `CliError('BACKEND')`.
 */
export async function createRuntime(
  name: SandboxName,
  limits: Partial<CodeRunLimits>,
  state: RuntimeState = {},
): Promise<CodeRuntime> {
  const { sessions, secret } = state
  if (sessions !== undefined && name !== 'quickjs')
    throw new CliError('USAGE', `sandbox sessions need the quickjs sandbox; ${name} does not keep them`)
  try {
    if (name === 'quickjs') {
      const { createQuickJSRuntime } = await import('@ptc/sandbox-quickjs')
      return createQuickJSRuntime({
        poolSize: 1,
        limits,
        ...(sessions !== undefined && { sessions }),
        ...(sessions === undefined && secret !== undefined && { secret }),
      })
    }
    const { createIsolatedVmRuntime } = await import('@ptc/sandbox-isolated-vm')
    return createIsolatedVmRuntime({ limits, warmIsolates: 0, processes: 1 })
  } catch (error) {
    throw new CliError(
      'BACKEND',
      `the ${name} sandbox cannot start: ` +
        `${firstLine(error).replace(/^the isolated-vm sandbox (cannot start|is not available): /, '')}`,
      { cause: error },
    )
  }
}

/** A runtime that remembers the result of its last run (its kind, message, logs and value, unrendered). */
export interface RecordingRuntime extends CodeRuntime {
  readonly last: CodeRunResult | undefined
}

export function recordingRuntime(inner: CodeRuntime): RecordingRuntime {
  let last: CodeRunResult | undefined
  return {
    name: inner.name,
    limits: inner.limits,
    get last() {
      return last
    },
    async run(request: CodeRunRequest): Promise<CodeRunResult> {
      const result = await inner.run(request)
      last = result
      return result
    },
    // The durable methods of a runtime that suspends programs (`--approve defer`, `ptc resume`).
    ...(inner.openRun !== undefined && { openRun: inner.openRun.bind(inner) }),
    ...(inner.resumeRun !== undefined && {
      resumeRun: async (run: SuspendedRun, request: ResumeRunRequest): Promise<CodeRunResult> => {
        const result = await (inner.resumeRun as NonNullable<CodeRuntime['resumeRun']>)(run, request)
        last = result
        return result
      },
    }),
    ...(inner.dropRun !== undefined && { dropRun: inner.dropRun.bind(inner) }),
    dispose: () => inner.dispose(),
    [Symbol.asyncDispose]: () => inner.dispose(),
    // The session methods of a runtime that keeps sessions (the PTC executor checks for them).
    ...(inner.endSession !== undefined && { endSession: inner.endSession.bind(inner) }),
    ...(inner.suspendSession !== undefined && { suspendSession: inner.suspendSession.bind(inner) }),
    ...(inner.resumeSession !== undefined && { resumeSession: inner.resumeSession.bind(inner) }),
  }
}
