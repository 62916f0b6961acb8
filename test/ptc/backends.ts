import type { CodeRuntime } from '@ptc/sandbox'
import { text } from '@ptc/ptc/testing'
import type { Agent, JsonValue, ToolsService } from '@ptc/tools'
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

/** Runs `code` as the agent's one `run_code` call through `tools`: the program's value; throws when the run failed. */
export async function runProgram(
  tools: ToolsService,
  agent: Agent,
  code: string,
  description = 'test',
): Promise<JsonValue | undefined> {
  const batch = await tools.execute({
    calls: [{ type: 'tool_call', id: 'run1', name: 'run_code', arguments: JSON.stringify({ code, description }) }],
    signal: new AbortController().signal,
    agent,
    log: { turn: 1, step: 1 },
  })
  const result = batch.results[0]?.result
  if (result === undefined) throw new Error('the batch returned no result')
  if (result.isError) throw new Error(`run_code failed: ${text(result)}`)
  return (result.value as { result?: JsonValue }).result
}
