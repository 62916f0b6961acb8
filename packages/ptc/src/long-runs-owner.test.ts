import { MemorySession, ToolsService, type Agent, type ToolExecutionResult } from '@ptc/tools'
import { expect, test } from 'vitest'
import { createPtcExecutor } from './executor.js'
import { FakeRuntime } from './testing/fake-runtime.js'
import { text } from './testing/fixtures.js'

test("a long run's handle answers only to its agent with its session object: the same id with another session is a stranger", async () => {
  const runtime = new FakeRuntime()
  let end!: (value: string) => void
  runtime.define('P', () => new Promise<string>((resolve) => (end = resolve)))
  const tools = new ToolsService()
  tools.setExecutor(createPtcExecutor({ runtime, longRuns: { returnAfterMs: 20 } }))
  const owner: Agent = { id: 'agent', session: new MemorySession() }
  let n = 0
  const call = async (args: object, agent: Agent): Promise<ToolExecutionResult> => {
    const call = { type: 'tool_call' as const, id: `c${++n}`, name: 'run_code' }
    const calls = [{ ...call, arguments: JSON.stringify({ description: 'd', ...args }) }]
    const out = await tools.execute({ calls, signal: new AbortController().signal, agent, log: { turn: 1, step: n } })
    return (out.results[0] as { result: ToolExecutionResult }).result
  }
  expect((await call({ code: 'P' }, owner)).value).toEqual({ logs: [], running: 'run-1' })
  // An agent id is a name a harness chose (every connection may be "agent"); its session object is this conversation's.
  const namesake = await call({ wait: 'run-1' }, { id: 'agent', session: new MemorySession() })
  expect(namesake.isError).toBe(true)
  expect(text(namesake)).toContain('belongs to another agent')
  end('done')
  expect((await call({ wait: 'run-1' }, owner)).value).toEqual({ logs: [], result: 'done' })
})
