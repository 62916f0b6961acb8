/**
 * One AbortSignal shared by many concurrent calls, as a harness passes its session's signal to every call:
 * 64 concurrent `execute` calls of `run_code` (with the timeout policy installed, so each sub-call fuses
 * signals too) and 64 concurrent runs straight on the runtime, over every real backend. Node warns of a
 * listener leak past 10 listeners per signal: none may appear, the signal carries no listener of ours once
 * the calls end, and aborting it still stops every call.
 */
import { getEventListeners } from 'node:events'
import type { CodeRuntime } from '@ptc/sandbox'
import { createPtcExecutor } from '@ptc/ptc'
import { defineTool, ToolsService, type ToolBatchResult } from '@ptc/tools'
import { installTimeoutPolicy } from '@ptc/tools/timeout'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest'
import { backends, warmUp } from './backends.js'

const CALLS = 64

const warnings: Error[] = []
const onWarning = (warning: Error): void => void warnings.push(warning)
beforeEach(() => {
  warnings.length = 0
  process.on('warning', onWarning)
})
afterEach(() => {
  process.off('warning', onWarning)
})

/** Let a warning emitted on this turn reach `process.on('warning')`. */
const settleWarnings = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

function service(runtime: CodeRuntime, gate?: Promise<void>): ToolsService {
  const tools = new ToolsService()
  tools.register(
    defineTool({
      name: 'add',
      description: 'Adds one, after the gate opens when there is one.',
      parameters: { a: { type: 'integer', required: true } },
      output: { schema: { type: 'integer' } },
      isConcurrencySafe: () => true,
      timeoutMs: 60_000,
      execute: async ({ a }, ctx) => {
        if (gate !== undefined)
          await Promise.race([
            gate,
            new Promise((_, reject) =>
              ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason), { once: true }),
            ),
          ])
        return a + 1
      },
    }),
  )
  installTimeoutPolicy(tools)
  tools.setExecutor(createPtcExecutor({ runtime, limits: { wallMs: 60_000 } }))
  return tools
}

const runCode = (tools: ToolsService, i: number, signal: AbortSignal): Promise<ToolBatchResult> =>
  tools.execute({
    calls: [
      {
        type: 'tool_call',
        id: `r${i}`,
        name: 'run_code',
        arguments: JSON.stringify({ code: `return await tools.add({ a: ${i} })`, description: 'add' }),
      },
    ],
    signal,
  })

describe.each(backends)('one signal shared by $label calls', ({ create, skip }) => {
  let runtime: CodeRuntime
  beforeAll(async () => {
    if (skip !== undefined) return
    runtime = create()
    await warmUp(runtime)
  })
  afterAll(async () => {
    await runtime?.dispose()
  })

  test.skipIf(skip !== undefined)(
    `${CALLS} concurrent execute calls and ${CALLS} concurrent runs: no listener-leak warning, no listener left`,
    async () => {
      const tools = service(runtime)
      const signal = new AbortController().signal
      const batches = await Promise.all(Array.from({ length: CALLS }, (_, i) => runCode(tools, i, signal)))
      expect(batches.map((b) => b.results[0]?.result.value)).toEqual(
        Array.from({ length: CALLS }, (_, i) => ({ logs: [], result: i + 1 })),
      )
      const runs = await Promise.all(
        Array.from({ length: CALLS }, (_, i) =>
          runtime.run({ code: `return ${i}`, bindings: [], call: async () => null, signal }),
        ),
      )
      expect(runs.map((r) => r.error)).toEqual(Array.from({ length: CALLS }, () => undefined))
      await settleWarnings()
      expect(warnings.map((w) => w.name)).toEqual([])
      expect(getEventListeners(signal, 'abort')).toHaveLength(0)
    },
    120_000,
  )

  test.skipIf(skip !== undefined)(
    'aborting the shared signal stops every call in flight',
    async () => {
      let open = (): void => undefined
      const gate = new Promise<void>((resolve) => (open = resolve))
      const tools = service(runtime, gate)
      const controller = new AbortController()
      const pending = Array.from({ length: CALLS }, (_, i) => runCode(tools, i, controller.signal))
      // While every call waits on the gate (or for an engine), the signal carries one listener of ours.
      await new Promise((resolve) => setTimeout(resolve, 50))
      expect(getEventListeners(controller.signal, 'abort').length).toBeLessThanOrEqual(2)
      controller.abort(new Error('the user stopped'))
      const batches = await Promise.all(pending)
      open()
      expect(batches.every((b) => b.results[0]?.result.isError === true)).toBe(true)
      await settleWarnings()
      expect(warnings.map((w) => w.name)).toEqual([])
    },
    120_000,
  )
})
