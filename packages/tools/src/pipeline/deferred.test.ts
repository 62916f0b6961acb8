/**
 * A deferred approval: denied unless the dispatch can wait (`deferrable`: `APPROVAL_DEFERRED`); a decision
 * given later (`decision`) answers the `ask` without the service, while deny, cancel and guards still apply.
 */
import { describe, expect, test } from 'vitest'
import { ToolsService } from '../registry/service.js'
import type { ApprovalService } from '../types/approval.js'
import type { ToolDispatchOptions, ToolExecutor } from '../types/executor.js'
import type { ToolExecutionResult } from '../types/tool.js'
import { agent, codeOf, textOf, tool } from './fixtures/tool.js'

/** A service with one tool that counts its runs, an executor that dispatches with `options`, and a deferring approval. */
function setup(options: ToolDispatchOptions, decide: ApprovalService['request'] = async () => 'deferred') {
  const asked: string[] = []
  const tools = new ToolsService({ approval: { request: (r) => (asked.push(r.exec.name), decide(r)) } })
  const counts = { body: 0 }
  tools.register(tool('t', { execute: () => (counts.body++, Promise.resolve('ran')) }))
  const executor: ToolExecutor = {
    describe: () => ({ schemas: [], knownNames: [] }),
    execute: async (input, services) => {
      const call = input.calls[0] as { id: string; name: string }
      const result: ToolExecutionResult = await services.dispatch(
        {
          callId: call.id,
          name: call.name,
          arguments: {},
          signal: input.signal,
          ...(input.agent !== undefined && { agent: input.agent }),
        },
        options,
      )
      return { results: [{ callId: call.id, result }], additionalContexts: [], concluded: false }
    },
  }
  tools.setExecutor(executor)
  const run = async (): Promise<ToolExecutionResult> =>
    (
      await tools.execute({
        calls: [{ type: 'tool_call', id: 'c', name: 't', arguments: '{}' }],
        signal: new AbortController().signal,
        agent: agent('a'),
      })
    ).results[0]?.result as ToolExecutionResult
  return { tools, counts, asked, run }
}

describe('deferred approval', () => {
  test('a dispatch that cannot wait is denied, saying why; one that can gets APPROVAL_DEFERRED with the reason', async () => {
    const plain = setup({})
    plain.tools.on('tools/pre-execute', () => ({ kind: 'ask', reason: 'risky' }))
    const denied = await plain.run()
    expect(codeOf(denied)).toBe('DENIED')
    expect(textOf(denied)).toMatch(/approval was deferred \(risky\), but this call cannot wait/)
    const waiting = setup({ deferrable: true })
    waiting.tools.on('tools/pre-execute', () => ({ kind: 'ask', reason: 'risky' }))
    const deferred = await waiting.run()
    expect(deferred.isError && deferred.error).toEqual({
      message: 'approval of this call was deferred (risky): the program waits for the decision',
      info: { name: 'ToolApprovalDeferredError', code: 'APPROVAL_DEFERRED', reason: 'risky' },
    })
    expect([plain.counts.body, waiting.counts.body]).toEqual([0, 0])
  })

  test('a decision given later answers the ask without the service: allowed runs the body, rejected denies', async () => {
    const allowed = setup({ decision: 'allowed-once' })
    allowed.tools.on('tools/pre-execute', () => ({ kind: 'ask', reason: 'risky' }))
    expect((await allowed.run()).isError).toBe(false)
    expect(allowed.counts.body).toBe(1)
    const rejected = setup({ decision: 'rejected' })
    rejected.tools.on('tools/pre-execute', () => ({ kind: 'ask', reason: 'risky' }))
    const result = await rejected.run()
    expect(codeOf(result)).toBe('DENIED')
    expect(textOf(result)).toBe('Error: the decision on its deferred approval rejected this call (risky)')
    expect([allowed.asked, rejected.asked, rejected.counts.body]).toEqual([[], [], 0])
  })

  test('with an allowed decision, a deny, a cancel and the guards still apply', async () => {
    const deny = setup({ decision: 'allowed-once' })
    deny.tools.on('tools/pre-execute', () => ({ kind: 'deny', reason: 'not any more' }))
    expect(textOf(await deny.run())).toBe('Error: not any more')
    const cancel = setup({ decision: 'allowed-once' })
    cancel.tools.on('tools/pre-execute', () => ({ kind: 'cancel' }))
    expect(codeOf(await cancel.run())).toBe('ABORTED_BEFORE_DISPATCH')
    const guarded = setup({ decision: 'allowed-once' })
    guarded.tools.on('tools/pre-execute', () => ({ kind: 'ask' }))
    guarded.tools.guard(() => 'the budget is spent')
    expect(textOf(await guarded.run())).toMatch(/the budget is spent/)
    expect([deny.counts.body, cancel.counts.body, guarded.counts.body]).toEqual([0, 0, 0])
  })
})
