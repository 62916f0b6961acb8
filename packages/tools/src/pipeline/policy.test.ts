import { describe, expect, test } from 'vitest'
import { ToolsService } from '../registry/service.js'
import type { ToolExecution } from '../types/tool.js'
import type { ApprovalOutcome, ApprovalRequest, ApprovalService } from '../types/approval.js'
import { agent, codeOf, runOne, textOf, tool } from './fixtures/tool.js'

/** A tool that counts body runs, and a wrapper that counts dispatches. */
function counted(tools: ToolsService): { body: number; wrapper: number } {
  const counts = { body: 0, wrapper: 0 }
  tools.register(
    tool('t', {
      execute: () => {
        counts.body++
        return Promise.resolve('ran')
      },
    }),
  )
  tools.on('tools/execute', (_exec, next) => {
    counts.wrapper++
    return next()
  })
  return counts
}

/** A fake approval service answering with a fixed outcome and recording requests. */
function approval(
  outcome: ApprovalOutcome | (() => Promise<ApprovalOutcome>),
): ApprovalService & { requests: ApprovalRequest[] } {
  const requests: ApprovalRequest[] = []
  return {
    requests,
    request(request) {
      requests.push(request)
      return typeof outcome === 'function' ? outcome() : Promise.resolve(outcome)
    },
  }
}

describe('tools/pre-execute', () => {
  test('deny skips wrappers and body, and its reason is the model text', async () => {
    const tools = new ToolsService()
    const counts = counted(tools)
    tools.on('tools/pre-execute', () => ({ kind: 'deny', reason: 'not today' }))
    const result = await runOne(tools, 't')
    expect(result.isError && result.error).toEqual({
      message: 'not today',
      info: { name: 'ToolDeniedError', code: 'DENIED' },
    })
    expect(textOf(result)).toBe('Error: not today')
    expect(counts).toEqual({ body: 0, wrapper: 0 })
  })

  test('deny may carry a structured identity with a user-facing reason kept out of the model text', async () => {
    const tools = new ToolsService()
    counted(tools)
    tools.on('tools/pre-execute', () => ({
      kind: 'deny',
      reason: 'blocked by policy',
      info: { name: 'PolicyError', code: 'POLICY', reason: 'ask your admin' },
    }))
    const result = await runOne(tools, 't')
    expect(result.isError && result.error.info).toEqual({
      name: 'PolicyError',
      code: 'POLICY',
      reason: 'ask your admin',
    })
    expect(textOf(result)).toBe('Error: blocked by policy')
  })

  test('cancel is ABORTED_BEFORE_DISPATCH and nothing runs', async () => {
    const tools = new ToolsService()
    const counts = counted(tools)
    tools.on('tools/pre-execute', () => ({ kind: 'cancel' }))
    expect(codeOf(await runOne(tools, 't'))).toBe('ABORTED_BEFORE_DISPATCH')
    expect(counts).toEqual({ body: 0, wrapper: 0 })
  })

  test('ask without an approval service is a denial', async () => {
    const tools = new ToolsService()
    const counts = counted(tools)
    tools.on('tools/pre-execute', () => ({ kind: 'ask', reason: 'writes files' }))
    const result = await runOne(tools, 't', {}, { agent: agent('a') })
    expect(codeOf(result)).toBe('DENIED')
    expect(textOf(result)).toMatch(/no approval service/)
    expect(counts.body).toBe(0)
  })

  test('ask without an agent is a denial, and the service is never asked', async () => {
    const service = approval('allowed-once')
    const tools = new ToolsService({ approval: service })
    const counts = counted(tools)
    tools.on('tools/pre-execute', () => ({ kind: 'ask' }))
    const result = await runOne(tools, 't')
    expect(codeOf(result)).toBe('DENIED')
    expect(textOf(result)).toMatch(/no agent/)
    expect(service.requests).toHaveLength(0)
    expect(counts.body).toBe(0)
  })

  test('ask answered allowed-once proceeds, and the service sees the call, reasons and signal', async () => {
    const service = approval('allowed-once')
    const tools = new ToolsService({ approval: service })
    const counts = counted(tools)
    tools.on('tools/pre-execute', () => ({
      kind: 'ask',
      reason: 'writes files',
      displayReason: { en: 'Write files?', fr: 'Écrire ?' },
    }))
    const a = agent('a')
    const result = await runOne(tools, 't', { path: 'x' }, { agent: a })
    expect(result).toMatchObject({ isError: false, value: 'ran' })
    expect(counts.body).toBe(1)
    const request = service.requests[0]
    expect(request?.exec.name).toBe('t')
    expect(request?.exec.agent).toBe(a)
    expect(request?.exec.arguments).toEqual({ path: 'x' })
    expect(request?.reason).toBe('writes files')
    expect(request?.displayReason).toEqual({ en: 'Write files?', fr: 'Écrire ?' })
    expect(request?.signal).toBeInstanceOf(AbortSignal)
  })

  test('rejected, cancelled, unavailable and a failing service are denials with distinct reasons', async () => {
    const texts: string[] = []
    const outcomes: (ApprovalOutcome | (() => Promise<ApprovalOutcome>))[] = [
      'rejected',
      'cancelled',
      'unavailable',
      () => Promise.reject(new Error('service down')),
      () => Promise.resolve('maybe' as ApprovalOutcome),
    ]
    for (const outcome of outcomes) {
      const tools = new ToolsService({ approval: approval(outcome) })
      const counts = counted(tools)
      tools.on('tools/pre-execute', () => ({ kind: 'ask' }))
      const result = await runOne(tools, 't', {}, { agent: agent('a') })
      expect(codeOf(result)).toBe('DENIED')
      expect(counts.body).toBe(0)
      texts.push(textOf(result))
    }
    expect(new Set(texts).size).toBe(outcomes.length)
  })

  test('a rejection says the approval service decided, not a user: the service may be code', async () => {
    const tools = new ToolsService({ approval: approval('rejected') })
    counted(tools)
    tools.on('tools/pre-execute', () => ({ kind: 'ask', reason: 'order 5 x apple' }))
    const result = await runOne(tools, 't', {}, { agent: agent('a') })
    expect(textOf(result)).toBe('Error: the approval service rejected this call (order 5 x apple)')
  })

  test('an answer that says who decided is told to the model with its name', async () => {
    const tools = new ToolsService({
      approval: { request: () => Promise.resolve({ outcome: 'rejected', by: 'the purchasing policy' }) },
    })
    counted(tools)
    tools.on('tools/pre-execute', () => ({ kind: 'ask', reason: 'order 5 x apple' }))
    const rejected = await runOne(tools, 't', {}, { agent: agent('a') })
    expect(textOf(rejected)).toBe('Error: the purchasing policy rejected this call (order 5 x apple)')
    const allowing = new ToolsService({
      approval: { request: () => Promise.resolve({ outcome: 'allowed-once', by: 'a person' }) },
    })
    const counts = counted(allowing)
    allowing.on('tools/pre-execute', () => ({ kind: 'ask' }))
    expect((await runOne(allowing, 't', {}, { agent: agent('a') })).isError).toBe(false)
    expect(counts.body).toBe(1)
  })

  test('a listener that short-circuits with allow skips later listeners', async () => {
    const tools = new ToolsService()
    counted(tools)
    const order: string[] = []
    tools.on('tools/pre-execute', () => {
      order.push('first')
      return { kind: 'allow' }
    })
    tools.on('tools/pre-execute', () => {
      order.push('second')
      return { kind: 'deny', reason: 'never reached' }
    })
    expect((await runOne(tools, 't')).isError).toBe(false)
    expect(order).toEqual(['first'])
  })

  test('the outer listener sees the decision of the inner ones and may override it', async () => {
    const tools = new ToolsService()
    counted(tools)
    tools.on('tools/pre-execute', async (_exec, next) => {
      const inner = await next()
      return inner.kind === 'deny' ? { kind: 'allow' } : inner
    })
    tools.on('tools/pre-execute', () => ({ kind: 'deny', reason: 'inner' }))
    expect((await runOne(tools, 't')).isError).toBe(false)
  })

  test('arguments reach listeners frozen: a listener cannot rewrite them', async () => {
    const tools = new ToolsService()
    let seen: unknown
    tools.register(
      tool('t', {
        execute: (args) => {
          seen = args
          return Promise.resolve(null)
        },
      }),
    )
    tools.on('tools/pre-execute', (exec, next) => {
      expect(Object.isFrozen(exec)).toBe(true)
      expect(Object.isFrozen(exec.arguments)).toBe(true)
      expect(() => {
        ;(exec.arguments as Record<string, unknown>)['path'] = 'evil'
      }).toThrow(TypeError)
      return next()
    })
    await runOne(tools, 't', { path: 'safe' })
    expect(seen).toEqual({ path: 'safe' })
  })
})

describe('guards', () => {
  test('a guard denial cannot be undone by a later listener', async () => {
    const tools = new ToolsService()
    const counts = counted(tools)
    tools.guard((exec) => (exec.name === 't' ? 'guarded' : undefined))
    tools.on('tools/pre-execute', () => ({ kind: 'allow' }))
    let postRan = 0
    tools.on('tools/post-execute', () => {
      postRan++
      return { kind: 'accept', value: 'forged' }
    })
    const result = await runOne(tools, 't')
    expect(result.isError && result.error.message).toBe('guarded')
    expect(codeOf(result)).toBe('DENIED')
    expect(counts).toEqual({ body: 0, wrapper: 0 })
    expect(postRan).toBe(0)
  })

  test('guards run after pre-execute, and an approved ask is still guarded', async () => {
    const tools = new ToolsService({ approval: approval('allowed-once') })
    const counts = counted(tools)
    const order: string[] = []
    tools.guard(() => {
      order.push('guard')
      return 'no'
    })
    tools.on('tools/pre-execute', () => {
      order.push('pre-execute')
      return { kind: 'ask' }
    })
    expect(codeOf(await runOne(tools, 't', {}, { agent: agent('a') }))).toBe('DENIED')
    expect(order).toEqual(['pre-execute', 'guard'])
    expect(counts.body).toBe(0)
  })

  test('a throwing guard denies (fail closed)', async () => {
    const tools = new ToolsService()
    const counts = counted(tools)
    tools.guard(() => {
      throw new Error('guard bug')
    })
    const result = await runOne(tools, 't')
    expect(codeOf(result)).toBe('DENIED')
    expect(textOf(result)).toMatch(/guard bug/)
    expect(counts.body).toBe(0)
  })

  test("scoped guards see only their agent's calls", async () => {
    const tools = new ToolsService()
    const counts = counted(tools)
    const a = agent('a')
    const seen: ToolExecution[] = []
    tools.scoped(a).guard((exec) => {
      seen.push(exec)
      return 'a is guarded'
    })
    expect(codeOf(await runOne(tools, 't', {}, { agent: a }))).toBe('DENIED')
    expect((await runOne(tools, 't', {}, { agent: agent('b') })).isError).toBe(false)
    expect((await runOne(tools, 't')).isError).toBe(false)
    expect(seen.map((e) => e.agent)).toEqual([a])
    expect(counts.body).toBe(2)
  })

  test('global guards run before scoped ones, and the first denial wins', async () => {
    const tools = new ToolsService()
    counted(tools)
    const a = agent('a')
    tools.scoped(a).guard(() => 'scoped')
    tools.guard(() => 'global')
    const result = await runOne(tools, 't', {}, { agent: a })
    expect(result.isError && result.error.message).toBe('global')
    expect(tools.checkGuards({ agent: a } as ToolExecution)).toBe('global')
  })

  test('a disposed guard no longer denies', async () => {
    const tools = new ToolsService()
    counted(tools)
    const dispose = tools.guard(() => 'no')
    dispose()
    expect((await runOne(tools, 't')).isError).toBe(false)
  })
})

describe('scoped listeners and ordering', () => {
  test("tools.scoped(agent).on(…) listeners see only that agent's calls, for every event", async () => {
    const tools = new ToolsService()
    tools.register(tool('t'))
    const a = agent('a')
    const child = agent('child', { parent: a })
    const seen: string[] = []
    const view = tools.scoped(a)
    view.on('tools/pre-execute', (exec, next) => {
      seen.push(`pre ${exec.agent?.id ?? '-'}`)
      return next()
    })
    view.on('tools/execute', (exec, next) => {
      seen.push(`exec ${exec.agent?.id ?? '-'}`)
      return next()
    })
    view.on('tools/post-execute', (exec, _r, next) => {
      seen.push(`post ${exec.agent?.id ?? '-'}`)
      return next()
    })
    view.on('tools/result', (exec) => {
      seen.push(`result ${exec.agent?.id ?? '-'}`)
    })
    await runOne(tools, 't', {}, { agent: agent('b') })
    await runOne(tools, 't')
    expect(seen).toEqual([])
    await runOne(tools, 't', {}, { agent: a })
    expect(seen).toEqual(['pre a', 'exec a', 'post a', 'result a'])
    seen.length = 0
    await runOne(tools, 't', {}, { agent: child })
    expect(seen).toEqual(['pre child', 'exec child', 'post child', 'result child'])
  })

  test('the first registered listener is outermost, in every waterfall', async () => {
    const tools = new ToolsService()
    const order: string[] = []
    tools.register(
      tool('t', {
        execute: () => {
          order.push('body')
          return Promise.resolve(null)
        },
      }),
    )
    for (const label of ['1', '2']) {
      tools.on('tools/pre-execute', async (_e, next) => {
        order.push(`pre ${label} in`)
        const d = await next()
        order.push(`pre ${label} out`)
        return d
      })
      tools.on('tools/execute', async (_e, next) => {
        order.push(`exec ${label} in`)
        const r = await next()
        order.push(`exec ${label} out`)
        return r
      })
      tools.on('tools/post-execute', async (_e, _r, next) => {
        order.push(`post ${label} in`)
        const d = await next()
        order.push(`post ${label} out`)
        return d
      })
    }
    await runOne(tools, 't')
    expect(order).toEqual([
      'pre 1 in',
      'pre 2 in',
      'pre 2 out',
      'pre 1 out',
      'exec 1 in',
      'exec 2 in',
      'body',
      'exec 2 out',
      'exec 1 out',
      'post 1 in',
      'post 2 in',
      'post 2 out',
      'post 1 out',
    ])
  })

  test('a global listener registered after a scoped one is still inner to it', async () => {
    const tools = new ToolsService()
    tools.register(tool('t'))
    const a = agent('a')
    const order: string[] = []
    tools.scoped(a).on('tools/pre-execute', async (_e, next) => {
      order.push('scoped')
      return next()
    })
    tools.on('tools/pre-execute', async (_e, next) => {
      order.push('global')
      return next()
    })
    await runOne(tools, 't', {}, { agent: a })
    expect(order).toEqual(['scoped', 'global'])
  })

  test('calling next() twice is an error and the body runs once', async () => {
    const tools = new ToolsService()
    const counts = counted(tools)
    tools.on('tools/execute', async (_exec, next) => {
      await next()
      return next()
    })
    const result = await runOne(tools, 't')
    expect(result.isError).toBe(true)
    expect(textOf(result)).toMatch(/next\(\) called more than once/)
    expect(counts.body).toBe(1)
  })

  test('calling next() twice in pre-execute is an error and the body never runs', async () => {
    const tools = new ToolsService()
    const counts = counted(tools)
    tools.on('tools/pre-execute', async (_exec, next) => {
      await next()
      return next()
    })
    const result = await runOne(tools, 't')
    expect(textOf(result)).toMatch(/next\(\) called more than once/)
    expect(counts.body).toBe(0)
  })

  test('a disposed listener is no longer called', async () => {
    const tools = new ToolsService()
    counted(tools)
    const dispose = tools.on('tools/pre-execute', () => ({ kind: 'deny', reason: 'no' }))
    dispose()
    dispose()
    expect((await runOne(tools, 't')).isError).toBe(false)
  })
})

describe('preflight and calls the harness already had approved', () => {
  const call = (id: string, args = '{}') => ({ type: 'tool_call' as const, id, name: 't', arguments: args })

  test("preflight returns the policies' decision without running anything; a throwing policy or bad arguments give allow", async () => {
    const tools = new ToolsService()
    const counts = counted(tools)
    const seen: ToolExecution[] = []
    tools.on('tools/pre-execute', (exec, next) => {
      seen.push(exec)
      const { mode } = exec.arguments as { mode?: string }
      if (mode === 'ask') return { kind: 'ask', reason: 'careful' }
      if (mode === 'deny') return { kind: 'deny', reason: 'no' }
      if (mode === 'throw') throw new Error('policy bug')
      return next()
    })
    const a = agent('a')
    expect(await tools.preflight({ callId: 'c1', name: 't', arguments: { mode: 'ask' }, agent: a })).toEqual({
      kind: 'ask',
      reason: 'careful',
    })
    expect(await tools.preflight({ callId: 'c2', name: 't', arguments: { mode: 'deny' } })).toEqual({
      kind: 'deny',
      reason: 'no',
    })
    expect(await tools.preflight({ callId: 'c3', name: 't', arguments: {} })).toEqual({ kind: 'allow' })
    expect(await tools.preflight({ callId: 'c4', name: 't', arguments: { mode: 'throw' } })).toEqual({ kind: 'allow' })
    expect(await tools.preflight({ callId: 'c5', name: 't', arguments: { n: 1n } })).toEqual({ kind: 'allow' })
    expect(counts).toEqual({ body: 0, wrapper: 0 })
    expect(seen[0]).toMatchObject({ callId: 'c1', rootCallId: 'c1', name: 't', arguments: { mode: 'ask' }, agent: a })
    expect(Object.isFrozen(seen[0])).toBe(true)
  })

  test('an approved call that a policy asks about runs without the approval service; deny and guards still apply', async () => {
    const service = approval('rejected')
    const tools = new ToolsService({ approval: service })
    const counts = counted(tools)
    tools.on('tools/pre-execute', (exec) =>
      (exec.arguments as { deny?: boolean }).deny === true
        ? { kind: 'deny', reason: 'never' }
        : { kind: 'ask', reason: 'careful' },
    )
    tools.guard((exec) => ((exec.arguments as { guarded?: boolean }).guarded === true ? 'guarded' : undefined))
    const out = await tools.execute({
      calls: [call('ok'), call('asked'), call('denied', '{"deny":true}'), call('guarded', '{"guarded":true}')],
      signal: new AbortController().signal,
      agent: agent('a'),
      approved: ['ok', 'denied', 'guarded'],
    })
    expect(out.results.map((r) => [r.callId, r.result.isError ? r.result.error.message : 'ran'])).toEqual([
      ['ok', 'ran'],
      ['asked', expect.stringMatching(/rejected/) as unknown],
      ['denied', 'never'],
      ['guarded', 'guarded'],
    ])
    expect(service.requests.map((r) => r.exec.callId)).toEqual(['asked'])
    expect(counts.body).toBe(1)
  })

  test('approved ids must be strings', async () => {
    const tools = new ToolsService()
    await expect(
      tools.execute({ calls: [], signal: new AbortController().signal, approved: [1] as never }),
    ).rejects.toThrow(/approved must be an array of call ids/)
  })
})
