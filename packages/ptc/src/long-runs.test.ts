import { MemorySession, ToolsService, type Agent, type ToolExecutionResult } from '@ptc/tools'
import { describe, expect, test } from 'vitest'
import { createPtcExecutor } from './executor.js'
import { FakeRuntime } from './testing/fake-runtime.js'
import { text } from './testing/fixtures.js'

/** A program the test ends when it wants: `end(value)`. */
function deferred(): { promise: Promise<string>; end(value: string): void } {
  let end!: (value: string) => void
  const promise = new Promise<string>((resolve) => (end = resolve))
  return { promise, end }
}

describe('long-run options', () => {
  test('a duration a timer cannot wait for is refused with its name and the longest one allowed', () => {
    const runtime = new FakeRuntime()
    expect(() => createPtcExecutor({ runtime, longRuns: { returnAfterMs: 2 ** 31 } })).toThrow(
      "longRuns.returnAfterMs must be at most 2147483647 ms (a timer's longest delay), not 2147483648",
    )
    expect(() => createPtcExecutor({ runtime, longRuns: { returnAfterMs: 1000, keepMs: 30 * 86_400_000 } })).toThrow(
      /^longRuns\.keepMs must be at most 2147483647 ms/,
    )
    expect(() => createPtcExecutor({ runtime, longRuns: { returnAfterMs: 0 } })).toThrow(
      'longRuns.returnAfterMs must be a positive number of milliseconds',
    )
    expect(() =>
      createPtcExecutor({ runtime, longRuns: { returnAfterMs: 2 ** 31 - 1, keepMs: 2 ** 31 - 1 } }),
    ).not.toThrow()
  })
})

describe('long runs keep a bounded number of programs', () => {
  test('an ended program nobody fetched goes when another program is taken to the background past maxBackgroundRuns', async () => {
    const runtime = new FakeRuntime()
    const a = deferred()
    const b = deferred()
    runtime.define('A', () => a.promise)
    runtime.define('B', () => b.promise)
    const tools = new ToolsService()
    tools.setExecutor(createPtcExecutor({ runtime, longRuns: { returnAfterMs: 20, maxBackgroundRuns: 1 } }))
    const agent: Agent = { id: 'agent', session: new MemorySession() }
    let n = 0
    const call = async (args: object): Promise<ToolExecutionResult> => {
      const out = await tools.execute({
        calls: [
          {
            type: 'tool_call',
            id: `c${++n}`,
            name: 'run_code',
            arguments: JSON.stringify({ description: 'd', ...args }),
          },
        ],
        signal: new AbortController().signal,
        agent,
        log: { turn: 1, step: n },
      })
      return (out.results[0] as { result: ToolExecutionResult }).result
    }
    expect((await call({ code: 'A' })).value).toEqual({ logs: [], running: 'run-1' })
    a.end('a done')
    // The program ends in the background (its result is settled a few turns later).
    await new Promise((resolve) => setTimeout(resolve, 10))
    expect((await call({ code: 'B' })).value).toEqual({ logs: [], running: 'run-2' })
    const gone = await call({ wait: 'run-1' })
    expect(gone.isError).toBe(true)
    expect(text(gone)).toContain('no running program "run-1"')
    b.end('b done')
    expect((await call({ wait: 'run-2' })).value).toEqual({ logs: [], result: 'b done' })
  })
})

describe('calls that arrive together', () => {
  test('each takes a place in the background from its start: past maxBackgroundRuns, a call waits for its program to end', async () => {
    const runtime = new FakeRuntime()
    const programs = [deferred(), deferred(), deferred(), deferred()]
    programs.forEach((program, i) => runtime.define(`P${i}`, () => program.promise))
    const tools = new ToolsService()
    tools.setExecutor(createPtcExecutor({ runtime, longRuns: { returnAfterMs: 20, maxBackgroundRuns: 2 } }))
    const agent: Agent = { id: 'agent', session: new MemorySession() }
    let answered = 0
    const calls = programs.map(async (_, i) => {
      const out = await tools.execute({
        calls: [
          {
            type: 'tool_call',
            id: `c${i}`,
            name: 'run_code',
            arguments: JSON.stringify({ description: 'd', code: `P${i}` }),
          },
        ],
        signal: new AbortController().signal,
        agent,
      })
      answered++
      return (out.results[0] as { result: ToolExecutionResult }).result.value as { running?: string; result?: string }
    })
    // Two go to the background (all four did, each call seeing room before any had gone); the others wait.
    while (answered < 2) await new Promise((resolve) => setTimeout(resolve, 5))
    programs.forEach((program, i) => program.end(`ended ${i}`))
    const parts = await Promise.all(calls)
    expect(parts.filter((part) => part.running !== undefined)).toHaveLength(2)
    expect(parts.filter((part) => part.result !== undefined).map((part) => part.result)).toHaveLength(2)
  })
})

describe('a backend that breaks its contract under a long run', () => {
  test('a run that rejects after it went to the background is no unhandled rejection: its wait answers the failure', async () => {
    const unhandled: unknown[] = []
    const onUnhandled = (reason: unknown): void => void unhandled.push(reason)
    process.on('unhandledRejection', onUnhandled)
    try {
      const broken = deferred()
      // A third-party CodeRuntime whose run() rejects (the seam's contract says it resolves once it started).
      const runtime = new (class extends FakeRuntime {
        override async run(): Promise<never> {
          await broken.promise
          throw new Error('the backend broke')
        }
      })()
      const tools = new ToolsService()
      tools.setExecutor(createPtcExecutor({ runtime, longRuns: { returnAfterMs: 20 } }))
      const agent: Agent = { id: 'agent', session: new MemorySession() }
      let n = 0
      const call = async (args: object): Promise<ToolExecutionResult> => {
        const out = await tools.execute({
          calls: [
            {
              type: 'tool_call',
              id: `c${++n}`,
              name: 'run_code',
              arguments: JSON.stringify({ description: 'd', ...args }),
            },
          ],
          signal: new AbortController().signal,
          agent,
        })
        return (out.results[0] as { result: ToolExecutionResult }).result
      }
      expect((await call({ code: 'anything' })).value).toEqual({ logs: [], running: 'run-1' })
      broken.end('now')
      await new Promise((resolve) => setTimeout(resolve, 20))
      const failed = await call({ wait: 'run-1' })
      expect(failed.isError).toBe(true)
      expect(text(failed)).toContain('the backend broke')
      await new Promise((resolve) => setImmediate(resolve))
      expect(unhandled).toEqual([])
    } finally {
      process.off('unhandledRejection', onUnhandled)
    }
  })
})
