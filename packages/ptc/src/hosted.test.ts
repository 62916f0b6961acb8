import {
  createNativeExecutor,
  defineTool,
  MemorySession,
  ToolBatchExecutionError,
  ToolsService,
  type Agent,
  type ApprovalRequest,
  type SessionEvent,
  type ToolCallBlock,
  type ToolExecution,
} from '@ptc/tools'
import { describe, expect, test } from 'vitest'
import { withHostedPrograms } from './hosted.js'
import { FakeRuntime } from './testing/fake-runtime.js'
import { fixtureTools, ptcHarness, sleep, text } from './testing/fixtures.js'

const PROGRAM = { type: 'code_execution_20250825', id: 'srvtoolu_1', code: 'r = await lookup(key="a")' }

/** A call made by a hosted program. */
function hosted(id: string, name: string, args: unknown, caller: ToolCallBlock['caller'] = PROGRAM): ToolCallBlock {
  return {
    type: 'tool_call',
    id,
    name,
    arguments: typeof args === 'string' ? args : JSON.stringify(args),
    ...(caller !== undefined && { caller }),
  }
}

/** The fields of the dispatch events that tell who called what. */
function dispatches(events: readonly SessionEvent[]): Array<Record<string, unknown>> {
  return events
    .filter((e) => e.type.startsWith('tool/ptc-'))
    .map(({ type, callId, subCallId, parentCallId, rootCallId, name, isError, code }) => ({
      type,
      callId,
      subCallId,
      parentCallId,
      rootCallId,
      name,
      isError,
      code,
    }))
    .map((e) => Object.fromEntries(Object.entries(e).filter(([, v]) => v !== undefined)))
}

/** A service over the native executor with hosted routing, the fixture tools, and an agent with a session. */
function nativeHarness(
  options: Parameters<typeof withHostedPrograms>[1] = {},
  approval?: (request: ApprovalRequest) => Promise<'allowed-once' | 'rejected'>,
) {
  const trace: string[] = []
  const tools = new ToolsService(approval === undefined ? {} : { approval: { request: approval } })
  for (const tool of fixtureTools(trace)) tools.register(tool)
  tools.setExecutor(withHostedPrograms(createNativeExecutor(), options))
  const session = new MemorySession()
  const agent: Agent = { id: 'agent', session }
  const batch = (calls: ToolCallBlock[], signal = new AbortController().signal) =>
    tools.execute({ calls, signal, agent, log: { turn: 1, step: 1 } })
  return { tools, session, agent, trace, batch }
}

describe('calls made by a provider-hosted program', () => {
  test("events of a program's calls that the session did not take fail the batch, the results attached", async () => {
    const tools = new ToolsService()
    for (const tool of fixtureTools()) tools.register(tool)
    tools.setExecutor(withHostedPrograms(createNativeExecutor()))
    const refusing = {
      append(event: SessionEvent): void {
        if (event.type === 'tool/ptc-dispatch') throw new Error('row too large')
      },
    }
    const thrown = await tools
      .execute({
        calls: [hosted('toolu_a', 'lookup', { key: 'abc' })],
        signal: new AbortController().signal,
        agent: { id: 'agent', session: refusing },
      })
      .catch((e: unknown) => e)
    expect(thrown).toBeInstanceOf(ToolBatchExecutionError)
    expect((thrown as ToolBatchExecutionError).message).toBe('the session log failed: row too large')
    expect((thrown as ToolBatchExecutionError).results).toMatchObject([
      { callId: 'toolu_a', result: { isError: false, value: { key: 'abc', value: 3 } } },
    ])
  })

  test('in code mode they are sub-dispatches of their program, logged under it; a direct call stays direct', async () => {
    const h = ptcHarness(new FakeRuntime())
    const seen: ToolExecution[] = []
    h.tools.on('tools/pre-execute', (exec, next) => (seen.push(exec), next()))
    const out = await h.batch([hosted('toolu_a', 'lookup', { key: 'a' }), hosted('toolu_b', 'lookup', { key: 'bbb' })])
    expect(out.results.map((r) => [r.callId, r.result.isError, text(r.result)])).toEqual([
      ['toolu_a', false, 'a=1'],
      ['toolu_b', false, 'bbb=3'],
    ])
    expect(seen.map((e) => [e.callId, e.rootCallId, e.parent !== undefined, e.agent === h.agent])).toEqual([
      ['srvtoolu_1:ptc:1', 'srvtoolu_1', true, true],
      ['srvtoolu_1:ptc:2', 'srvtoolu_1', true, true],
    ])
    expect(seen[0]?.parent).toBe(seen[1]?.parent)
    expect(dispatches(h.session.events)).toEqual([
      { type: 'tool/ptc-program', callId: 'srvtoolu_1', name: 'code_execution_20250825', code: PROGRAM.code },
      {
        type: 'tool/ptc-dispatch-start',
        callId: 'toolu_a',
        subCallId: 'srvtoolu_1:ptc:1',
        parentCallId: 'srvtoolu_1',
        rootCallId: 'srvtoolu_1',
        name: 'lookup',
      },
      {
        type: 'tool/ptc-dispatch-start',
        callId: 'toolu_b',
        subCallId: 'srvtoolu_1:ptc:2',
        parentCallId: 'srvtoolu_1',
        rootCallId: 'srvtoolu_1',
        name: 'lookup',
      },
      {
        type: 'tool/ptc-dispatch',
        callId: 'toolu_a',
        subCallId: 'srvtoolu_1:ptc:1',
        parentCallId: 'srvtoolu_1',
        rootCallId: 'srvtoolu_1',
        name: 'lookup',
        isError: false,
      },
      {
        type: 'tool/ptc-dispatch',
        callId: 'toolu_b',
        subCallId: 'srvtoolu_1:ptc:2',
        parentCallId: 'srvtoolu_1',
        rootCallId: 'srvtoolu_1',
        name: 'lookup',
        isError: false,
      },
    ])
    expect(h.session.ofType('tool/call')).toEqual([])

    // The same tool called by the model itself: code mode refuses it, as before.
    const direct = await h.batch([{ type: 'tool_call', id: 'toolu_c', name: 'lookup', arguments: '{"key":"a"}' }])
    expect(direct.results[0]?.result.error?.info?.code).toBe('UNKNOWN_TOOL')
  })

  test('a hosted program cannot start run_code: the transport is only for the model', async () => {
    const runtime = new FakeRuntime()
    const h = ptcHarness(runtime)
    const out = await h.batch([hosted('t1', 'run_code', { code: 'return 1', description: 'nested' })])
    expect(out.results[0]?.result.error?.info?.code).toBe('UNKNOWN_TOOL')
    expect(h.session.ofType('tool/ptc-dispatch').map((e) => [e.name, e.isError])).toEqual([['run_code', true]])
  })

  test("a program's sub-calls are numbered across the batches it spans; its program event is written once", async () => {
    const h = nativeHarness()
    await h.batch([hosted('t1', 'lookup', { key: 'a' }), hosted('t2', 'lookup', { key: 'b' })])
    await h.batch([hosted('t3', 'write', { key: 'c' })])
    const other = { type: 'code_execution_20260120', id: 'srvtoolu_2' }
    await h.batch([hosted('t4', 'lookup', { key: 'd' }, other)])
    const starts = h.session.ofType('tool/ptc-dispatch-start').map((e) => [e.callId, e.subCallId])
    expect(starts).toEqual([
      ['t1', 'srvtoolu_1:ptc:1'],
      ['t2', 'srvtoolu_1:ptc:2'],
      ['t3', 'srvtoolu_1:ptc:3'],
      ['t4', 'srvtoolu_2:ptc:1'],
    ])
    expect(h.session.ofType('tool/ptc-program').map((e) => [e.callId, e.name, e.code ?? null, e.turn, e.step])).toEqual(
      [
        ['srvtoolu_1', 'code_execution_20250825', PROGRAM.code, 1, 1],
        ['srvtoolu_2', 'code_execution_20260120', null, 1, 1],
      ],
    )
  })

  test('policy and approval apply to each call, with the program as parent', async () => {
    const asked: string[] = []
    const h = nativeHarness(
      {},
      async (request) => (asked.push(request.exec.callId), request.exec.name === 'write' ? 'rejected' : 'allowed-once'),
    )
    h.tools.on('tools/pre-execute', (exec, next) =>
      exec.parent !== undefined ? { kind: 'ask', reason: 'a hosted program calls' } : next(),
    )
    const out = await h.batch([hosted('t1', 'lookup', { key: 'a' }), hosted('t2', 'write', { key: 'w' })])
    expect(asked).toEqual(['srvtoolu_1:ptc:1', 'srvtoolu_1:ptc:2'])
    expect(out.results.map((r) => r.result.error?.info?.code ?? 'ok')).toEqual(['ok', 'DENIED'])
    expect(h.trace).toEqual(['start a', 'end a'])
    expect(h.session.ofType('tool/ptc-dispatch').map((e) => [e.subCallId, e.isError])).toEqual([
      ['srvtoolu_1:ptc:1', false],
      ['srvtoolu_1:ptc:2', true],
    ])
  })

  test("a program's call is never approved by the batch's approved ids: its ask goes to the approval service", async () => {
    const h = nativeHarness({}, async () => 'rejected')
    h.tools.on('tools/pre-execute', () => ({ kind: 'ask', reason: 'careful' }))
    const out = await h.tools.execute({
      calls: [hosted('t1', 'lookup', { key: 'a' })],
      signal: new AbortController().signal,
      agent: h.agent,
      approved: ['t1', 'srvtoolu_1:ptc:1'],
    })
    expect(out.results[0]?.result.error?.info?.code).toBe('DENIED')
    expect(h.trace).toEqual([])
  })

  test('a mixed batch runs its runs one after another: an exclusive call never overlaps, results keep model order', async () => {
    const h = nativeHarness()
    // Two calls of `meet` return met: true only when both were running at once (else each gives up after 5 s).
    let arrivals = 0
    let meet = (): void => undefined
    const met = new Promise<void>((resolve) => (meet = resolve))
    h.tools.register(
      defineTool({
        name: 'meet',
        description: 'Waits for another call of itself.',
        parameters: { key: { type: 'string', required: true } },
        output: { schema: { type: 'object', additionalProperties: false, properties: { met: { type: 'boolean' } } } },
        isConcurrencySafe: () => true,
        execute: async ({ key }) => {
          h.trace.push(`start ${key}`)
          if (++arrivals === 2) meet()
          const together = await Promise.race([met.then(() => true), sleep(5_000).then(() => false)])
          h.trace.push(`end ${key}`)
          return { met: together }
        },
      }),
    )
    const out = await h.batch([
      { type: 'tool_call', id: 'd1', name: 'write', arguments: '{"key":"direct","delayMs":30}' },
      hosted('t1', 'meet', { key: 'x' }),
      hosted('t2', 'meet', { key: 'y' }),
      { type: 'tool_call', id: 'd2', name: 'lookup', arguments: '{"key":"z"}' },
    ])
    expect(out.results.map((r) => r.callId)).toEqual(['d1', 't1', 't2', 'd2'])
    expect(out.results.map((r) => r.result.value)).toEqual([
      { written: 'direct' },
      { met: true },
      { met: true },
      { key: 'z', value: 1 },
    ])
    // The direct write ran alone; the program's two safe calls overlapped; the last direct call came after them.
    expect(h.trace.slice(0, 4)).toEqual(['start write direct', 'end write direct', 'start x', 'start y'])
    expect(h.trace.slice(6)).toEqual(['start z', 'end z'])
    expect(h.session.ofType('tool/call').map((e) => e.callId)).toEqual(['d1', 'd2'])
    expect(h.session.ofType('tool/ptc-dispatch').map((e) => e.callId)).toEqual(['t1', 't2'])
  })

  test("a program's exclusive call waits for its earlier calls and runs alone", async () => {
    const h = nativeHarness()
    await h.batch([
      hosted('t1', 'lookup', { key: 'a', delayMs: 20 }),
      hosted('t2', 'write', { key: 'w' }),
      hosted('t3', 'lookup', { key: 'b' }),
    ])
    expect(h.trace).toEqual(['start a', 'end a', 'start write w', 'end write w', 'start b', 'end b'])
  })

  test('an unknown name, unreadable arguments and invalid arguments are answered and logged, the other calls run', async () => {
    const h = nativeHarness()
    const out = await h.batch([
      hosted('t1', 'nope', {}),
      hosted('t2', 'lookup', '{"key": '),
      hosted('t3', 'lookup', { key: 7 }),
      hosted('t4', 'lookup', { key: 'ok' }),
    ])
    expect(out.results.map((r) => r.result.error?.info?.code ?? 'ok')).toEqual([
      'UNKNOWN_TOOL',
      'INVALID_ARGS',
      'INVALID_ARGS',
      'ok',
    ])
    expect(text(out.results[1]!.result)).toMatch(/arguments are not valid JSON/)
    expect(h.session.ofType('tool/ptc-dispatch').map((e) => [e.callId, e.isError])).toEqual([
      ['t1', true],
      ['t2', true],
      ['t3', true],
      ['t4', false],
    ])
  })

  test('a caller that is not { type, id } strings fails that call with a clear error; nothing is dispatched', async () => {
    const h = nativeHarness()
    const out = await h.batch([
      hosted('t1', 'lookup', { key: 'a' }, { type: 'code_execution_20250825', id: '' }),
      hosted('t2', 'lookup', { key: 'b' }),
    ])
    expect(out.results[0]?.result.error?.info?.code).toBe('INVALID_ARGS')
    expect(text(out.results[0]!.result)).toMatch(/call of lookup has a malformed caller/)
    expect(out.results[1]?.result.isError).toBe(false)
    expect(h.trace).toEqual(['start b', 'end b'])
  })

  test('an abort stops the program: queued calls never start, a call that ignores it is abandoned after the grace', async () => {
    let release = (): void => undefined
    const stubborn = defineTool({
      name: 'stubborn',
      description: 'Ignores its signal.',
      parameters: {},
      output: { schema: { type: 'object', additionalProperties: false, properties: { done: { type: 'boolean' } } } },
      isConcurrencySafe: () => true,
      execute: () => new Promise<{ done: boolean }>((resolve) => (release = () => resolve({ done: true }))),
    })
    const h = nativeHarness({ drainGraceMs: 20 })
    h.tools.register(stubborn)
    const controller = new AbortController()
    const pending = h.batch(
      [
        hosted('t1', 'stubborn', {}),
        hosted('t2', 'lookup', { key: 'slow', delayMs: 10_000 }),
        hosted('t3', 'write', { key: 'never' }),
      ],
      controller.signal,
    )
    while (!h.trace.includes('start slow')) await sleep(1)
    controller.abort(new Error('user pressed stop'))
    const out = await pending
    // The stubborn call is abandoned, the cooperative one fails with the abort reason it threw, the queued one never starts.
    expect(out.results.map((r) => [r.result.error?.info?.code, text(r.result)])).toEqual([
      [
        'ABORTED',
        'Error: the batch was aborted and the tool call was abandoned: it ignored its abort signal and had not settled 20 ms later',
      ],
      ['TOOL_ERROR', 'Error: user pressed stop'],
      ['ABORTED', 'Error: the batch was aborted before this call started'],
    ])
    expect(h.trace).toEqual(['start slow'])
    const settled = h.session.ofType('tool/ptc-dispatch')
    expect(settled.map((e) => [e.callId, e.abandoned ?? false])).toEqual([
      ['t1', true],
      ['t2', false],
    ])
    expect(h.session.ofType('tool/ptc-dispatch-start').map((e) => e.callId)).toEqual(['t1', 't2'])
    release()
    while (h.session.ofType('tool/ptc-dispatch-late').length === 0) await sleep(1)
    // Its body's own outcome, logged late: a success after the abort is ABORTED, as for any call.
    expect(
      h.session
        .ofType('tool/ptc-dispatch-late')
        .map((e) => [e.callId, (e.error as { info?: { code?: string } } | undefined)?.info?.code]),
    ).toEqual([['t1', 'ABORTED']])
  })

  test("two agents' programs with the same id do not share numbering; a forgotten program numbers from 1", async () => {
    const h = nativeHarness({ maxPrograms: 1 })
    const other: Agent = { id: 'other', session: h.session }
    await h.batch([hosted('t1', 'lookup', { key: 'a' })])
    await h.tools.execute({
      calls: [hosted('t2', 'lookup', { key: 'b' })],
      signal: new AbortController().signal,
      agent: other,
    })
    await h.batch([hosted('t3', 'lookup', { key: 'c' })])
    expect(h.session.ofType('tool/ptc-dispatch-start').map((e) => e.subCallId)).toEqual([
      'srvtoolu_1:ptc:1',
      'srvtoolu_1:ptc:1',
      'srvtoolu_1:ptc:1',
    ])
    expect(h.session.ofType('tool/ptc-program')).toHaveLength(3)
  })

  test('options are checked', () => {
    expect(() => withHostedPrograms(createNativeExecutor(), { maxParallelSubCalls: 0 })).toThrow(
      /maxParallelSubCalls must be a positive integer/,
    )
    expect(() => withHostedPrograms(createNativeExecutor(), { drainGraceMs: -1 })).toThrow(/drainGraceMs/)
    expect(() => withHostedPrograms(createNativeExecutor(), { maxPrograms: 1.5 })).toThrow(
      /maxPrograms must be a positive integer/,
    )
    expect(() => withHostedPrograms({} as never)).toThrow(/needs a ToolExecutor/)
  })
})
