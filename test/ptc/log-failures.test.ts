/**
 * A session that fails to take a run_code program's sub-dispatch events fails the batch that returns the
 * program's outcome (`ToolBatchExecutionError`, its results attached), as a failure of the batch's own log
 * does: with and without the batch's `log`, for a long run's last part, and for a resumed durable program.
 * Real QuickJS runtimes, a real file store.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createPtcExecutor, type PtcExecutorOptions } from '@ptc/ptc'
import { fixtureTools, text } from '@ptc/ptc/testing'
import { createQuickJSRuntime } from '@ptc/sandbox-quickjs'
import { createFileSessionStore } from '@ptc/sandbox/session'
import {
  ToolBatchExecutionError,
  ToolsService,
  type Agent,
  type SessionEvent,
  type ToolBatchInput,
  type ToolExecutionResult,
} from '@ptc/tools'
import { afterAll, describe, expect, test } from 'vitest'

const dir = mkdtempSync(join(tmpdir(), 'ptc-log-failures-'))
const runtime = createQuickJSRuntime({ isolation: 'inline' })
afterAll(async () => {
  await runtime.dispose()
  rmSync(dir, { recursive: true, force: true })
})

/** A session that refuses the events whose type `refuse` names (as a store with a row size limit might), and keeps the rest. */
function refusingSession(refuse: (type: string) => boolean): {
  session: { append(event: SessionEvent): void }
  events: SessionEvent[]
} {
  const events: SessionEvent[] = []
  return {
    events,
    session: {
      append(event: SessionEvent): void {
        if (refuse(event.type)) throw new Error(`row too large (${event.type})`)
        events.push(event)
      },
    },
  }
}

function service(
  options: Omit<PtcExecutorOptions, 'runtime'> = {},
  approval?: ConstructorParameters<typeof ToolsService>[0],
): ToolsService {
  const tools = new ToolsService(approval)
  for (const tool of fixtureTools()) tools.register(tool)
  tools.setExecutor(createPtcExecutor({ runtime, ...options }))
  return tools
}

let calls = 0
function runCode(code: string, agent: Agent, logged: boolean, extra: Record<string, unknown> = {}): ToolBatchInput {
  // A long run's next part is asked for with { wait, description } alone.
  const args = JSON.stringify({ ...('wait' in extra ? {} : { code }), description: 'test', ...extra })
  return {
    calls: [{ type: 'tool_call', id: `c${++calls}`, name: 'run_code', arguments: args }],
    signal: new AbortController().signal,
    agent,
    ...(logged && { log: { turn: 1, step: 1 } }),
  }
}

const batchError = (thrown: unknown): ToolBatchExecutionError => {
  expect(thrown).toBeInstanceOf(ToolBatchExecutionError)
  return thrown as ToolBatchExecutionError
}
const resultOf = (error: ToolBatchExecutionError): ToolExecutionResult =>
  (error.results[0] as { result: ToolExecutionResult }).result

describe('sub-dispatch events a session did not take', () => {
  test.each([
    ['without the batch log', false],
    ['with the batch log', true],
  ])('fail the batch that returns the program, its result attached (%s)', async (_, logged) => {
    const tools = service()
    const { session, events } = refusingSession((type) => type === 'tool/ptc-dispatch')
    const agent: Agent = { id: 'a', session }
    const thrown = await tools
      .execute(
        runCode(
          `const r = await tools.lookup({ key: 'abc' }); console.log('got', r.value); return r.value`,
          agent,
          logged,
        ),
      )
      .catch((e: unknown) => e)
    const error = batchError(thrown)
    expect(error.code).toBe('BATCH_FAILED')
    expect(error.message).toBe('the session log failed: row too large (tool/ptc-dispatch)')
    // Nothing of the program is lost: its outcome comes with the error.
    const result = resultOf(error)
    expect(result.isError).toBe(false)
    expect(result.value).toEqual({ logs: ['got 3'], result: 3 })
    expect(text(result)).toBe('got 3\n3')
    // The events the session took are there; the next batch on a session that works is not failed by this one.
    expect(events.map((e) => e.type)).toContain('tool/ptc-dispatch-start')
    const fine = service()
    const ok = await fine.execute(
      runCode(
        `return (await tools.lookup({ key: 'x' })).value`,
        { id: 'b', session: refusingSession(() => false).session },
        logged,
      ),
    )
    expect(ok.results[0]?.result.value).toEqual({ logs: [], result: 1 })
  })

  test("a long run's failure fails the batch of the part that returns its outcome, not the earlier parts", async () => {
    const tools = service({ longRuns: { returnAfterMs: 50 } })
    // The settle event of the slow call comes while the program runs in the background.
    const { session } = refusingSession((type) => type === 'tool/ptc-dispatch')
    const agent: Agent = { id: 'a', session }
    const first = await tools.execute(
      runCode(`const r = await tools.lookup({ key: 'slow', delayMs: 300 }); return r.value`, agent, true),
    )
    const handle = (first.results[0]?.result.value as { running?: string }).running
    expect(typeof handle).toBe('string')
    let error: ToolBatchExecutionError | undefined
    for (let part = 0; part < 400 && error === undefined; part++) {
      const next = await tools.execute(runCode('', agent, true, { wait: handle })).catch((e: unknown) => batchError(e))
      if (next instanceof ToolBatchExecutionError) error = next
      else expect((next.results[0]?.result.value as { running?: string }).running).toBe(handle)
    }
    expect(error?.message).toBe('the session log failed: row too large (tool/ptc-dispatch)')
    expect(resultOf(error as ToolBatchExecutionError).value).toEqual({ logs: [], result: 4 })
  })

  test('a resumed durable program whose resumption the session did not take fails its resume, the outcome attached', async () => {
    const tools = service(
      { durable: { store: createFileSessionStore({ directory: join(dir, 'store') }) } },
      { approval: { request: async () => 'deferred' } },
    )
    tools.on('tools/pre-execute', (exec, next) => (exec.name === 'write' ? { kind: 'ask', reason: 'writes' } : next()))
    const { session } = refusingSession((type) => type === 'tool/ptc-resume')
    const agent: Agent = { id: 'a', session }
    const first = await tools.execute(runCode(`return (await tools.write({ key: 'k' })).written`, agent, true))
    const token = (first.results[0]?.result.value as { awaiting?: { token: string } }).awaiting?.token
    expect(typeof token).toBe('string')
    const thrown = await tools
      .resume({
        token: token as string,
        decision: 'allowed-once',
        agent,
        signal: new AbortController().signal,
        log: { turn: 2, step: 1 },
      })
      .catch((e: unknown) => e)
    const error = batchError(thrown)
    expect(error.message).toBe('the session log failed: row too large (tool/ptc-resume)')
    expect(resultOf(error).value).toEqual({ logs: [], result: 'k' })
  })
})
