/**
 * A harness may raise `maxPendingSubCalls` far above its default (256): a program's calls then wait in the
 * scheduler's queue by the tens of thousands. They all start in the order the program made them, each once,
 * at most `maxParallelSubCalls` at a time, and each answer reaches its own call. (The queue is not an array
 * shifted from the front: past about 16 000 entries that moved every later entry on each start; see
 * `bench/ptc` for the time.)
 */
import { createPtcExecutor } from '@ptc/ptc'
import { createQuickJSRuntime } from '@ptc/sandbox-quickjs'
import { defineTool, MemorySession, ToolsService, type Agent } from '@ptc/tools'
import { afterAll, expect, test } from 'vitest'
import { runProgram } from './backends.js'

const CALLS = 20_000
const runtime = createQuickJSRuntime({ isolation: 'inline' })
afterAll(() => runtime.dispose())

test(`${CALLS} calls under one Promise.all start in order, each once, 10 at a time, and each gets its own answer`, async () => {
  const tools = new ToolsService()
  const started: number[] = []
  let running = 0
  let most = 0
  tools.register(
    defineTool({
      name: 'echo',
      description: 'Returns i.',
      parameters: { i: { type: 'integer', required: true } },
      output: { schema: { type: 'integer' } },
      isConcurrencySafe: () => true,
      execute: async ({ i }) => {
        started.push(i)
        most = Math.max(most, ++running)
        await null
        running--
        return i
      },
    }),
  )
  tools.setExecutor(
    createPtcExecutor({
      runtime,
      maxParallelSubCalls: 10,
      limits: { maxPendingSubCalls: CALLS, maxSubCalls: CALLS, wallMs: 60_000 },
    }),
  )
  const agent: Agent = { id: 'agent', session: new MemorySession() }
  const value = await runProgram(
    tools,
    agent,
    `const all = await Promise.all(Array.from({ length: ${CALLS} }, (_, i) => tools.echo({ i })))
     return all.every((v, i) => v === i) ? all.length : all.findIndex((v, i) => v !== i)`,
  )
  expect(value).toBe(CALLS)
  expect(started).toEqual(Array.from({ length: CALLS }, (_, i) => i))
  expect(most).toBe(10)
}, 90_000)
