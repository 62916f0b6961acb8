import { describe, expect, test } from 'vitest'
import { agent, call, codeOf, ConcurrencyProbe, delay, runBatch, textOf, tool } from '../pipeline/fixtures/tool.js'
import { ToolsService } from '../registry/service.js'
import { defineTool } from '../schema/define-tool.js'
import { MemorySession } from '../session/memory.js'
import type { ToolDefinition } from '../types/tool.js'
import type { UserMessage } from '../types/content.js'
import { createNativeExecutor } from './native.js'

/** A tool whose body takes `ms` (from its arguments, default 15) inside the probe. */
function timed(name: string, probe: ConcurrencyProbe, overrides: Partial<ToolDefinition> = {}): ToolDefinition {
  return tool(name, {
    execute: (args, ctx) =>
      probe.around(ctx.callId, async () => {
        await delay((args as { ms?: number }).ms ?? 15)
        return ctx.callId
      }),
    ...overrides,
  })
}

const safe = { isConcurrencySafe: (): boolean => true }
const message = (text: string): UserMessage => ({ role: 'user', content: [{ type: 'text', text }] })

describe('scheduling', () => {
  test('parallel calls overlap up to the default cap of 10', async () => {
    const probe = new ConcurrencyProbe()
    const tools = new ToolsService()
    tools.register(timed('p', probe, safe))
    const batch = await runBatch(
      tools,
      Array.from({ length: 14 }, (_, i) => call('p', {}, `c${i}`)),
    )
    expect(probe.max).toBe(10)
    expect(batch.results.map((r) => r.callId)).toEqual(Array.from({ length: 14 }, (_, i) => `c${i}`))
  })

  test('the service option sets the cap of the default executor', async () => {
    const probe = new ConcurrencyProbe()
    const tools = new ToolsService({ maxParallelToolCalls: 3 })
    tools.register(timed('p', probe, safe))
    await runBatch(
      tools,
      Array.from({ length: 7 }, () => call('p')),
    )
    expect(probe.max).toBe(3)
  })

  test('a per-batch maxParallelToolCalls overrides the configured cap', async () => {
    const probe = new ConcurrencyProbe()
    const tools = new ToolsService({ maxParallelToolCalls: 3 })
    tools.register(timed('p', probe, safe))
    await runBatch(
      tools,
      Array.from({ length: 6 }, () => call('p')),
      { maxParallelToolCalls: 2 },
    )
    expect(probe.max).toBe(2)
    const wide = new ConcurrencyProbe()
    tools.register(timed('q', wide, safe))
    await runBatch(
      tools,
      Array.from({ length: 6 }, () => call('q')),
      { maxParallelToolCalls: 5 },
    )
    expect(wide.max).toBe(5)
  })

  test('the pool is rolling: a finished call frees its slot before the whole group is done', async () => {
    const probe = new ConcurrencyProbe()
    const tools = new ToolsService()
    tools.register(timed('p', probe, safe))
    // cap 2: while the long call runs, the short ones pass through the other slot one after another.
    await runBatch(
      tools,
      [
        call('p', { ms: 50 }, 'long'),
        call('p', { ms: 2 }, 's1'),
        call('p', { ms: 2 }, 's2'),
        call('p', { ms: 2 }, 's3'),
      ],
      {
        maxParallelToolCalls: 2,
      },
    )
    expect(probe.max).toBe(2)
    expect(probe.log.indexOf('start s3')).toBeLessThan(probe.log.indexOf('end long'))
    expect(probe.log.indexOf('end s1')).toBeLessThan(probe.log.indexOf('start s2'))
  })

  test('an exclusive call runs alone: nothing overlaps it, before or after', async () => {
    const probe = new ConcurrencyProbe()
    const tools = new ToolsService()
    tools.register(timed('p', probe, safe))
    tools.register(timed('x', probe))
    let overlapDuringExclusive = 0
    tools.register(
      tool('watch', {
        execute: (_args, ctx) =>
          probe.around(ctx.callId, async () => {
            overlapDuringExclusive = Math.max(overlapDuringExclusive, probe.active - 1)
            await delay(15)
            overlapDuringExclusive = Math.max(overlapDuringExclusive, probe.active - 1)
            return null
          }),
      }),
    )
    await runBatch(tools, [
      call('p', {}, 'p1'),
      call('p', {}, 'p2'),
      call('watch', {}, 'w'),
      call('p', {}, 'p3'),
      call('p', {}, 'p4'),
    ])
    expect(overlapDuringExclusive).toBe(0)
    const log = probe.log
    const wStart = log.indexOf('start w')
    const wEnd = log.indexOf('end w')
    expect(wEnd).toBe(wStart + 1)
    expect(log.slice(0, wStart).sort()).toEqual(['end p1', 'end p2', 'start p1', 'start p2'])
    expect(probe.max).toBe(2)
  })

  test('consecutive exclusive calls run one at a time, in model order', async () => {
    const probe = new ConcurrencyProbe()
    const tools = new ToolsService()
    tools.register(timed('x', probe))
    await runBatch(tools, [call('x', { ms: 20 }, 'a'), call('x', { ms: 5 }, 'b'), call('x', { ms: 1 }, 'c')])
    expect(probe.max).toBe(1)
    expect(probe.log).toEqual(['start a', 'end a', 'start b', 'end b', 'start c', 'end c'])
  })

  test('results come back in model order, whatever order they settle in', async () => {
    const probe = new ConcurrencyProbe()
    const tools = new ToolsService()
    tools.register(timed('p', probe, safe))
    const batch = await runBatch(tools, [
      call('p', { ms: 40 }, 'slow'),
      call('p', { ms: 1 }, 'fast'),
      call('nope', {}, 'unknown'),
      call('p', { ms: 20 }, 'mid'),
    ])
    expect(batch.results.map((r) => r.callId)).toEqual(['slow', 'fast', 'unknown', 'mid'])
    expect(batch.results.map((r) => (r.result.isError ? codeOf(r.result) : r.result.value))).toEqual([
      'slow',
      'fast',
      'UNKNOWN_TOOL',
      'mid',
    ])
    expect(probe.log.indexOf('end fast')).toBeLessThan(probe.log.indexOf('end slow'))
  })

  test.each<[string, Partial<ToolDefinition>]>([
    [
      'a classifier that throws',
      {
        isConcurrencySafe: () => {
          throw new Error('classifier bug')
        },
      },
    ],
    ["a classifier returning 'yes'", { isConcurrencySafe: () => 'yes' as unknown as boolean }],
    ['a classifier returning 1', { isConcurrencySafe: () => 1 as unknown as boolean }],
    ['no classifier', {}],
  ])('classification is fail-closed: %s makes the call exclusive', async (_label, overrides) => {
    const probe = new ConcurrencyProbe()
    const tools = new ToolsService()
    tools.register(timed('t', probe, overrides))
    const batch = await runBatch(tools, [call('t'), call('t'), call('t')])
    expect(probe.max).toBe(1)
    expect(batch.results.every((r) => !r.result.isError)).toBe(true)
  })

  test('a call with unparsable raw arguments is exclusive (and fails alone)', async () => {
    const probe = new ConcurrencyProbe()
    const tools = new ToolsService()
    let classified = 0
    tools.register(
      timed('p', probe, {
        isConcurrencySafe: () => {
          classified++
          return true
        },
      }),
    )
    const batch = await runBatch(tools, [call('p', {}, 'a'), call('p', { raw: '{' }, 'bad'), call('p', {}, 'b')])
    expect(probe.log).toEqual(['start a', 'end a', 'start b', 'end b'])
    expect(codeOf(batch.results[1]?.result ?? { isError: false, value: null, content: [] })).toBe('INVALID_ARGS')
    expect(classified).toBe(2)
  })

  test('a defineTool call with invalid arguments is exclusive, and its classifier never sees them', async () => {
    const probe = new ConcurrencyProbe()
    const tools = new ToolsService()
    const seen: unknown[] = []
    tools.register(
      defineTool({
        name: 'typed',
        description: 'typed',
        parameters: { ms: { type: 'integer', required: true } },
        output: { schema: { type: 'string' }, render: (_a, v) => [{ type: 'text', text: v }] },
        isConcurrencySafe: (args) => {
          seen.push(args)
          return true
        },
        execute: (args, ctx) =>
          probe.around(ctx.callId, async () => {
            await delay(args.ms)
            return ctx.callId
          }),
      }),
    )
    const batch = await runBatch(tools, [
      call('typed', { ms: 10 }, 'a'),
      call('typed', { ms: 'x' }, 'bad'),
      call('typed', { ms: 10 }, 'b'),
    ])
    expect(seen).toEqual([{ ms: 10 }, { ms: 10 }])
    expect(batch.results.map((r) => codeOf(r.result))).toEqual([undefined, 'INVALID_ARGS', undefined])
    // 'bad' is a barrier: 'a' finished before it, 'b' started after it.
    expect(probe.log).toEqual(['start a', 'end a', 'start b', 'end b'])
  })

  test('an abort mid-batch still gives every call a result, in model order', async () => {
    const probe = new ConcurrencyProbe()
    const tools = new ToolsService()
    const controller = new AbortController()
    tools.register(timed('x', probe))
    tools.register(
      tool('stop', {
        execute: async () => {
          controller.abort()
          return 'stopping'
        },
      }),
    )
    const batch = await runBatch(
      tools,
      [call('x', {}, 'a'), call('stop', {}, 's'), call('x', {}, 'b'), call('x', {}, 'c')],
      { signal: controller.signal },
    )
    expect(batch.results.map((r) => r.callId)).toEqual(['a', 's', 'b', 'c'])
    expect(batch.results.map((r) => codeOf(r.result))).toEqual([
      undefined,
      'ABORTED',
      'ABORTED_BEFORE_DISPATCH',
      'ABORTED_BEFORE_DISPATCH',
    ])
    expect(probe.log).toEqual(['start a', 'end a'])
  })

  test('a pre-aborted batch gives each call ABORTED_BEFORE_DISPATCH and runs no body', async () => {
    const probe = new ConcurrencyProbe()
    const tools = new ToolsService()
    tools.register(timed('p', probe, safe))
    const controller = new AbortController()
    controller.abort()
    const batch = await runBatch(tools, [call('p'), call('p'), call('nope')], { signal: controller.signal })
    expect(batch.results.map((r) => codeOf(r.result))).toEqual([
      'ABORTED_BEFORE_DISPATCH',
      'ABORTED_BEFORE_DISPATCH',
      'UNKNOWN_TOOL',
    ])
    expect(probe.log).toEqual([])
  })

  test('an empty batch settles with nothing', async () => {
    const tools = new ToolsService()
    expect(await runBatch(tools, [])).toEqual({ results: [], additionalContexts: [], concluded: false })
  })

  test('createNativeExecutor rejects a bad cap', () => {
    expect(() => createNativeExecutor({ maxParallelToolCalls: 0 })).toThrow(TypeError)
    expect(() => createNativeExecutor({ maxParallelToolCalls: 1.5 })).toThrow(TypeError)
  })
})

describe('deferContext and concludeTurn', () => {
  test("contexts attach to that call's result in call order and aggregate in model order", async () => {
    const tools = new ToolsService()
    tools.register(
      tool('ctx', {
        isConcurrencySafe: () => true,
        execute: async (args, ctx) => {
          const { label, ms } = args as { label: string; ms: number }
          ctx.deferContext(message(`${label}-1`))
          await delay(ms)
          ctx.deferContext(message(`${label}-2`))
          return label
        },
      }),
    )
    const batch = await runBatch(tools, [call('ctx', { label: 'A', ms: 30 }), call('ctx', { label: 'B', ms: 1 })])
    expect(batch.results.map((r) => r.result.additionalContexts?.map(textOf))).toEqual([
      ['A-1', 'A-2'],
      ['B-1', 'B-2'],
    ])
    expect(batch.additionalContexts.map(textOf)).toEqual(['A-1', 'A-2', 'B-1', 'B-2'])
  })

  test('contexts deferred by a failing call still ride its result', async () => {
    const tools = new ToolsService()
    tools.register(
      tool('t', {
        execute: async (_args, ctx) => {
          ctx.deferContext(message('before failing'))
          throw new Error('boom')
        },
      }),
    )
    const batch = await runBatch(tools, [call('t')])
    expect(batch.results[0]?.result.isError).toBe(true)
    expect(batch.additionalContexts.map(textOf)).toEqual(['before failing'])
  })

  test('a context deferred after the body settled is ignored', async () => {
    const tools = new ToolsService()
    let late: ((m: UserMessage) => void) | undefined
    tools.register(
      tool('t', {
        execute: async (_args, ctx) => {
          late = ctx.deferContext
          return null
        },
      }),
    )
    const first = await runBatch(tools, [call('t')])
    late?.(message('too late'))
    expect(first.additionalContexts).toEqual([])
  })

  test('a context that is not a user message makes the call an error result', async () => {
    const tools = new ToolsService()
    tools.register(
      tool('t', {
        execute: async (_args, ctx) => {
          ctx.deferContext({ role: 'assistant', content: [] } as unknown as UserMessage)
          return null
        },
      }),
    )
    const batch = await runBatch(tools, [call('t')])
    expect(batch.results[0]?.result.isError).toBe(true)
  })

  test('concluded comes only from a success', async () => {
    const tools = new ToolsService()
    tools.register(
      tool('done', {
        execute: async (_args, ctx) => {
          ctx.concludeTurn()
          return 'done'
        },
      }),
    )
    tools.register(
      tool('fails', {
        execute: async (_args, ctx) => {
          ctx.concludeTurn()
          throw new Error('no')
        },
      }),
    )
    tools.register(
      tool('bad-output', {
        output: { schema: { type: 'string' }, render: () => [] },
        execute: async (_args, ctx) => {
          ctx.concludeTurn()
          return 1
        },
      }),
    )
    tools.register(tool('plain'))
    const success = await runBatch(tools, [call('plain'), call('done')])
    expect(success.concluded).toBe(true)
    expect(success.results[1]?.result.concludesTurn).toBe(true)
    expect(success.results[0]?.result.concludesTurn).toBeUndefined()
    const failure = await runBatch(tools, [call('plain'), call('fails'), call('bad-output')])
    expect(failure.concluded).toBe(false)
    expect(failure.results.map((r) => r.result.concludesTurn)).toEqual([undefined, undefined, undefined])
  })

  test('a success that is aborted after its body does not conclude', async () => {
    const tools = new ToolsService()
    const controller = new AbortController()
    tools.register(
      tool('done', {
        execute: async (_args, ctx) => {
          ctx.concludeTurn()
          controller.abort()
          return 'done'
        },
      }),
    )
    const batch = await runBatch(tools, [call('done')], { signal: controller.signal })
    expect(batch.concluded).toBe(false)
  })
})

describe('session logging', () => {
  test('with log and an agent session, tool/call and tool/result events are appended, results in model order', async () => {
    const session = new MemorySession()
    const a = agent('a', { session })
    const tools = new ToolsService()
    tools.register(
      tool('p', {
        isConcurrencySafe: () => true,
        output: {
          schema: {},
          render: (_a, v) => [{ type: 'text', text: `v=${JSON.stringify(v)}` }],
          presentationMeta: () => ({ card: 'x' }),
        },
        execute: async (args) => {
          await delay((args as { ms: number }).ms)
          return { secret: 'value' }
        },
      }),
    )
    await runBatch(tools, [call('p', { ms: 30 }, 'slow'), call('p', { ms: 1 }, 'fast'), call('missing', {}, 'gone')], {
      agent: a,
      log: { turn: 3, step: 2 },
    })
    const calls = session.ofType('tool/call')
    const results = session.ofType('tool/result')
    expect(calls.map((e) => e['callId'])).toEqual(['slow', 'fast', 'gone'])
    expect(results.map((e) => e['callId'])).toEqual(['slow', 'fast', 'gone'])
    expect(calls[0]).toMatchObject({ type: 'tool/call', turn: 3, step: 2, name: 'p', arguments: '{"ms":30}' })
    expect(results[0]).toMatchObject({
      type: 'tool/result',
      turn: 3,
      step: 2,
      name: 'p',
      isError: false,
      content: [{ type: 'text', text: 'v={"secret":"value"}' }],
      meta: { card: 'x' },
    })
    expect(results[2]).toMatchObject({ isError: true, error: { info: { code: 'UNKNOWN_TOOL' } } })
    for (const event of results) {
      expect(Object.keys(event)).not.toContain('value')
      expect(typeof event.time).toBe('number')
    }
    // Every call event of the batch precedes the first result of a later call.
    const types = session.events.map((e) => `${e.type} ${String(e['callId'])}`)
    expect(types.indexOf('tool/call slow')).toBeLessThan(types.indexOf('tool/result slow'))
  })

  test('without log, nothing is appended even with an agent session', async () => {
    const session = new MemorySession()
    const tools = new ToolsService()
    tools.register(tool('t'))
    await runBatch(tools, [call('t')], { agent: agent('a', { session }) })
    expect(session.events).toEqual([])
  })

  test('the batch settles only after every event is appended', async () => {
    const appended: string[] = []
    const slowSession = {
      append: async (event: { type: string }): Promise<void> => {
        await delay(5)
        appended.push(event.type)
      },
    }
    const tools = new ToolsService()
    tools.register(tool('t'))
    await runBatch(tools, [call('t'), call('t')], {
      agent: agent('a', { session: slowSession }),
      log: { turn: 1, step: 1 },
    })
    expect(appended).toEqual(['tool/call', 'tool/result', 'tool/call', 'tool/result'])
  })

  test('a failing session rejects the batch with BATCH_FAILED after every call settled, keeping the results', async () => {
    const tools = new ToolsService()
    let ran = 0
    tools.register(
      tool('t', {
        execute: async () => {
          ran++
          return null
        },
      }),
    )
    const broken = { append: (): Promise<void> => Promise.reject(new Error('disk full')) }
    const failure = runBatch(tools, [call('t'), call('t')], {
      agent: agent('a', { session: broken }),
      log: { turn: 1, step: 1 },
    })
    await expect(failure).rejects.toMatchObject({
      code: 'BATCH_FAILED',
      results: [{ result: { isError: false } }, { result: { isError: false } }],
    })
    expect(ran).toBe(2)
  })
})
