import type { CodeRunLimits, CodeRunRequest, CodeRunResult, CodeRuntime } from '@ptc/sandbox'
import { CliError, firstLine } from './errors.js'

export const SANDBOXES = ['quickjs', 'isolated-vm'] as const
export type SandboxName = (typeof SANDBOXES)[number]

/** Limits from the command line, as the PTC executor takes them. */
export function limitsFrom(options: { timeoutMs?: number | undefined; memoryMb?: number | undefined }): Partial<CodeRunLimits> {
  return {
    ...(options.timeoutMs !== undefined && { cpuMs: options.timeoutMs, wallMs: options.timeoutMs }),
    ...(options.memoryMb !== undefined && { memoryBytes: options.memoryMb * 1024 * 1024 }),
  }
}

/**
 * Starts the chosen backend (loaded on demand, so QuickJS runs never load the
 * native addon). A backend that cannot start here is a `CliError('BACKEND')`.
 */
export async function createRuntime(name: SandboxName, limits: Partial<CodeRunLimits>): Promise<CodeRuntime> {
  try {
    if (name === 'quickjs') {
      const { createQuickJSRuntime } = await import('@ptc/sandbox-quickjs')
      return createQuickJSRuntime({ poolSize: 1, limits })
    }
    const { createIsolatedVmRuntime } = await import('@ptc/sandbox-isolated-vm')
    return createIsolatedVmRuntime({ limits, warmIsolates: 0, processes: 1 })
  } catch (error) {
    throw new CliError('BACKEND', `the ${name} sandbox cannot start: ${firstLine(error).replace(/^the isolated-vm sandbox (cannot start|is not available): /, '')}`, { cause: error })
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
    get last() {
      return last
    },
    async run(request: CodeRunRequest): Promise<CodeRunResult> {
      const result = await inner.run(request)
      last = result
      return result
    },
    dispose: () => inner.dispose(),
    [Symbol.asyncDispose]: () => inner.dispose(),
  }
}
