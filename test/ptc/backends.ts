import type { CodeRuntime } from '@ptc/sandbox'
import { createIsolatedVmRuntime, isolatedVmAvailability } from '@ptc/sandbox-isolated-vm'
import { createQuickJSRuntime } from '@ptc/sandbox-quickjs'

/** A real backend an integration suite runs against, or why it is skipped here. */
export interface Backend {
  readonly label: string
  readonly create: () => CodeRuntime
  /** Undefined when available; otherwise the written reason for the skip. */
  readonly skip: string | undefined
}

const ivm = isolatedVmAvailability()

/** Every real backend: QuickJS in both isolations (always), isolated-vm where it is installed. */
export const backends: readonly Backend[] = [
  { label: 'quickjs (worker)', create: () => createQuickJSRuntime({ poolSize: 2 }), skip: undefined },
  { label: 'quickjs (inline)', create: () => createQuickJSRuntime({ isolation: 'inline' }), skip: undefined },
  {
    label: 'isolated-vm',
    create: () => createIsolatedVmRuntime(),
    skip: ivm.available ? undefined : `isolated-vm is not available here: ${ivm.reason}`,
  },
]

/**
 * Runs two trivial programs so a suite's first test does not pay for engine boot: a run's wall counts
 * from its run() call, and a cold worker or engine process takes part of a short wall.
 */
export async function warmUp(runtime: CodeRuntime): Promise<void> {
  const warm = { code: 'return 1', bindings: [], call: () => Promise.reject(new Error('no tools')) }
  await Promise.all([runtime.run(warm), runtime.run(warm)])
}
