import { describe, expect, test } from 'vitest'
import { ToolsService } from '../registry/service.js'
import { installTimeoutPolicy } from '../timeout/index.js'
import type { ToolDefinition } from '../types/tool.js'
import type { ToolExecution, ToolExecutionResult } from '../types/tool.js'
import { agent, codeOf, deferred, delay, runOne, textOf, tool } from './fixtures/tool.js'

/** A tool whose output is `{ n: number }`, rendered as `n=<n>`, with presentation meta `{ shown: n }`. */
function counter(overrides: Partial<ToolDefinition> = {}): ToolDefinition {
  return tool('counter', {
    output: {
      schema: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'], additionalProperties: false },
      render: (_args, value) => [{ type: 'text', text: `n=${JSON.stringify((value as { n: number }).n)}` }],
      presentationMeta: (_args, value) => ({ shown: (value as { n: number }).n }),
    },
    execute: () => Promise.resolve({ n: 1 }),
    ...overrides,
  })
}

describe('tools/post-execute', () => {
  test('accept with content replaces the content and keeps value and meta', async () => {
    const tools = new ToolsService()
    tools.register(counter())
    tools.on('tools/post-execute', () => ({ kind: 'accept', content: [{ type: 'text', text: 'redacted' }] }))
    const result = await runOne(tools, 'counter')
    expect(result).toEqual({
      isError: false,
      value: { n: 1 },
      content: [{ type: 'text', text: 'redacted' }],
      meta: { shown: 1 },
    })
  })

  test('accept with value revalidates and re-renders content and meta', async () => {
    const tools = new ToolsService()
    tools.register(counter())
    tools.on('tools/post-execute', () => ({ kind: 'accept', value: { n: 7 } }))
    const result = await runOne(tools, 'counter')
    expect(result).toEqual({
      isError: false,
      value: { n: 7 },
      content: [{ type: 'text', text: 'n=7' }],
      meta: { shown: 7 },
    })
  })

  test('an invalid replacement value is INVALID_TOOL_OUTPUT', async () => {
    const tools = new ToolsService()
    tools.register(counter())
    tools.on('tools/post-execute', () => ({ kind: 'accept', value: { n: 'seven' } }))
    const result = await runOne(tools, 'counter')
    expect(codeOf(result)).toBe('INVALID_TOOL_OUTPUT')
    expect(result.value).toBeUndefined()
  })

  test('a replacement value that is not lossless JSON is INVALID_TOOL_OUTPUT', async () => {
    const tools = new ToolsService()
    tools.register(counter())
    tools.on('tools/post-execute', () => ({ kind: 'accept', value: { n: Number.NaN } }))
    expect(codeOf(await runOne(tools, 'counter'))).toBe('INVALID_TOOL_OUTPUT')
  })

  test('replacing both content and value is an error', async () => {
    const tools = new ToolsService()
    tools.register(counter())
    tools.on(
      'tools/post-execute',
      () => ({ kind: 'accept', value: { n: 2 }, content: [{ type: 'text', text: 'x' }] }) as never,
    )
    const result = await runOne(tools, 'counter')
    expect(result.isError).toBe(true)
    expect(textOf(result)).toMatch(/never both/)
  })

  test('block turns the outcome into a valueless error carrying the feedback', async () => {
    const tools = new ToolsService()
    tools.register(counter())
    tools.on('tools/post-execute', () => ({ kind: 'block', feedback: [{ type: 'text', text: 'try a smaller n' }] }))
    const result = await runOne(tools, 'counter')
    expect(result.isError).toBe(true)
    expect(result.value).toBeUndefined()
    expect(result.content).toEqual([{ type: 'text', text: 'try a smaller n' }])
    expect(result.isError && result.error.message).toBe('try a smaller n')
    expect(result.concludesTurn).toBeUndefined()
  })

  test('block drops a conclusion the body asked for', async () => {
    const tools = new ToolsService()
    tools.register(
      counter({
        execute: (_args, ctx) => {
          ctx.concludeTurn()
          return Promise.resolve({ n: 1 })
        },
      }),
    )
    tools.on('tools/post-execute', () => ({ kind: 'block', feedback: [{ type: 'text', text: 'no' }] }))
    const batch = await tools.execute({
      calls: [{ type: 'tool_call', id: 'c', name: 'counter', arguments: '{}' }],
      signal: new AbortController().signal,
    })
    expect(batch.concluded).toBe(false)
  })

  test('post-execute sees failures too, and may replace their content', async () => {
    const tools = new ToolsService()
    tools.register(counter({ execute: () => Promise.reject(new Error('boom')) }))
    const seen: ToolExecutionResult[] = []
    tools.on('tools/post-execute', (_exec, result) => {
      seen.push(result)
      return { kind: 'accept', content: [{ type: 'text', text: 'it failed' }] }
    })
    const result = await runOne(tools, 'counter')
    expect(seen[0]?.isError).toBe(true)
    expect(result.isError && result.error.message).toBe('boom')
    expect(result.content).toEqual([{ type: 'text', text: 'it failed' }])
  })

  test('the result seen by post-execute is frozen', async () => {
    const tools = new ToolsService()
    tools.register(counter())
    tools.on('tools/post-execute', (_exec, result, next) => {
      expect(Object.isFrozen(result)).toBe(true)
      expect(Object.isFrozen(result.value)).toBe(true)
      return next()
    })
    expect((await runOne(tools, 'counter')).isError).toBe(false)
  })

  test('post-execute may attach contexts, after those the body deferred', async () => {
    const tools = new ToolsService()
    tools.register(
      counter({
        execute: (_args, ctx) => {
          ctx.deferContext({ role: 'user', content: [{ type: 'text', text: 'from body' }] })
          return Promise.resolve({ n: 1 })
        },
      }),
    )
    tools.on('tools/post-execute', () => ({
      kind: 'accept',
      additionalContexts: [{ role: 'user', content: [{ type: 'text', text: 'from policy' }] }],
    }))
    const result = await runOne(tools, 'counter')
    expect(result.additionalContexts?.map(textOf)).toEqual(['from body', 'from policy'])
  })
})

describe('projectContent', () => {
  test('applies before post-execute, which sees and may still replace its content', async () => {
    const tools = new ToolsService()
    const seen: string[] = []
    tools.register(
      counter({ projectContent: (_exec, result) => [{ type: 'text', text: `projected ${textOf(result)}` }] }),
    )
    tools.on('tools/post-execute', (_exec, result, next) => {
      seen.push(textOf(result))
      return next()
    })
    const result = await runOne(tools, 'counter')
    expect(seen).toEqual(['projected n=1'])
    expect(textOf(result)).toBe('projected n=1')
    expect(result.value).toEqual({ n: 1 })
  })

  test('returning undefined keeps the rendered content', async () => {
    const tools = new ToolsService()
    tools.register(counter({ projectContent: () => undefined }))
    expect(textOf(await runOne(tools, 'counter'))).toBe('n=1')
  })

  test('a post-execute content replacement wins over the projection', async () => {
    const tools = new ToolsService()
    tools.register(counter({ projectContent: () => [{ type: 'text', text: 'projected' }] }))
    tools.on('tools/post-execute', () => ({ kind: 'accept', content: [{ type: 'text', text: 'policy' }] }))
    expect(textOf(await runOne(tools, 'counter'))).toBe('policy')
  })

  test('is skipped for failures that bypass post-execute', async () => {
    const tools = new ToolsService()
    let projected = 0
    tools.register(
      counter({
        projectContent: () => {
          projected++
          return undefined
        },
      }),
    )
    tools.on('tools/pre-execute', () => ({ kind: 'deny', reason: 'no' }))
    await runOne(tools, 'counter')
    expect(projected).toBe(0)
  })
  test('the callback present when the call started is used, even if the body replaces it', async () => {
    const tools = new ToolsService()
    const definition = counter({ projectContent: () => [{ type: 'text', text: 'projected at start' }] })
    definition.execute = () => {
      definition.projectContent = () => [{ type: 'text', text: 'projected by the replacement' }]
      return Promise.resolve({ n: 1 })
    }
    tools.register(definition)
    expect(textOf(await runOne(tools, 'counter'))).toBe('projected at start')
    expect(textOf(await runOne(tools, 'counter'))).toBe('projected by the replacement')
  })

  test('a callback added while the call runs is not used by that call', async () => {
    const tools = new ToolsService()
    const definition = counter()
    definition.execute = () => {
      definition.projectContent = () => [{ type: 'text', text: 'projected' }]
      return Promise.resolve({ n: 1 })
    }
    tools.register(definition)
    expect(textOf(await runOne(tools, 'counter'))).toBe('n=1')
  })
})

describe('finalizeContent', () => {
  function finalizing(overrides: Partial<ToolDefinition> = {}): {
    definition: ToolDefinition
    calls: ToolExecutionResult[]
  } {
    const calls: ToolExecutionResult[] = []
    const definition = counter({
      finalizeContent: (_exec, result) => {
        calls.push(result)
        return [...result.content, { type: 'text', text: '(final)' }]
      },
      ...overrides,
    })
    return { definition, calls }
  }

  test('runs exactly once for a success, last, on a frozen result, and its content is what everyone sees', async () => {
    const tools = new ToolsService()
    const { definition, calls } = finalizing()
    tools.register(definition)
    const order: string[] = []
    tools.on('tools/post-execute', (_e, _r, next) => {
      order.push('post')
      return next()
    })
    let observed: ToolExecutionResult | undefined
    tools.on('tools/result', (_e, result) => {
      order.push(`result after ${calls.length} finalize`)
      observed = result
    })
    const result = await runOne(tools, 'counter')
    expect(calls).toHaveLength(1)
    expect(Object.isFrozen(calls[0])).toBe(true)
    expect(order).toEqual(['post', 'result after 1 finalize'])
    expect(textOf(result)).toBe('n=1\n(final)')
    expect(observed).toBe(result)
    expect(result.value).toEqual({ n: 1 })
    expect(result.meta).toEqual({ shown: 1 })
  })

  test.each<[string, (tools: ToolsService) => Promise<ToolExecutionResult>, string]>([
    ['invalid raw arguments', (tools) => runOne(tools, 'counter', { raw: '{' }), 'INVALID_ARGS'],
    [
      'a denial',
      (tools) => {
        tools.on('tools/pre-execute', () => ({ kind: 'deny', reason: 'no' }))
        return runOne(tools, 'counter')
      },
      'DENIED',
    ],
    [
      'a pre-aborted call',
      (tools) => {
        const controller = new AbortController()
        controller.abort()
        return runOne(tools, 'counter', {}, { signal: controller.signal })
      },
      'ABORTED_BEFORE_DISPATCH',
    ],
    [
      'an abort after the body started',
      (tools) => {
        const controller = new AbortController()
        tools.on('tools/execute', async (_e, next) => {
          const r = await next()
          controller.abort()
          return r
        })
        return runOne(tools, 'counter', {}, { signal: controller.signal })
      },
      'ABORTED',
    ],
    [
      'a thrown body',
      (tools) => {
        tools.on('tools/execute', () => {
          throw new Error('boom')
        })
        return runOne(tools, 'counter')
      },
      'TOOL_ERROR',
    ],
    [
      'a timeout',
      (tools) => {
        installTimeoutPolicy(tools)
        return runOne(tools, 'slow')
      },
      'TOOL_TIMEOUT',
    ],
  ])('runs exactly once for %s', async (_label, run, code) => {
    const tools = new ToolsService()
    const { definition, calls } = finalizing()
    tools.register(definition)
    const slow = finalizing({ timeoutMs: 5, execute: () => delay(30).then(() => ({ n: 1 })) })
    tools.register({ ...slow.definition, name: 'slow' })
    const result = await run(tools)
    const all = [...calls, ...slow.calls]
    expect(all).toHaveLength(1)
    expect(codeOf(result)).toBe(code)
    expect(all[0]?.isError && all[0].error.info?.code).toBe(code)
    expect(textOf(result)).toMatch(/\(final\)$/)
  })

  test('runs once for a call stopped because its registration was replaced before it started', async () => {
    const tools = new ToolsService()
    const a = agent('a')
    const { definition, calls } = finalizing()
    tools.register(definition)
    tools.on('tools/pre-execute', (_e, next) => {
      tools.scoped(a).register(tool('counter'))
      return next()
    })
    const result = await runOne(tools, 'counter', {}, { agent: a })
    expect(codeOf(result)).toBe('UNKNOWN_TOOL')
    expect(calls).toHaveLength(1)
  })

  test('the callback present when the call started is used, even if it is replaced while the body awaits', async () => {
    const tools = new ToolsService()
    const { definition, calls } = finalizing()
    const release = deferred()
    definition.execute = () => release.promise.then(() => ({ n: 1 }))
    tools.register(definition)
    const pending = runOne(tools, 'counter')
    definition.finalizeContent = () => [{ type: 'text', text: 'finalized by the replacement' }]
    release.resolve()
    expect(textOf(await pending)).toBe('n=1\n(final)')
    expect(calls).toHaveLength(1)
    expect(textOf(await runOne(tools, 'counter'))).toBe('finalized by the replacement')
  })

  test('a callback removed while the body runs still finalizes that call', async () => {
    const tools = new ToolsService()
    const { definition, calls } = finalizing()
    definition.execute = () => {
      delete definition.finalizeContent
      return Promise.resolve({ n: 1 })
    }
    tools.register(definition)
    expect(textOf(await runOne(tools, 'counter'))).toBe('n=1\n(final)')
    expect(calls).toHaveLength(1)
  })

  test('a throwing finalizeContent is an error result, and it is not called again', async () => {
    const tools = new ToolsService()
    let calls = 0
    tools.register(
      counter({
        finalizeContent: () => {
          calls++
          throw new Error('finalize bug')
        },
      }),
    )
    const result = await runOne(tools, 'counter')
    expect(calls).toBe(1)
    expect(result.isError && result.error.message).toMatch(/finalize bug/)
  })

  test('invalid finalized content is an error result, and finalize is not called again', async () => {
    const tools = new ToolsService()
    let calls = 0
    tools.register(
      counter({
        finalizeContent: () => {
          calls++
          return [{ type: 'text', text: 42 }] as never
        },
      }),
    )
    const result = await runOne(tools, 'counter')
    expect(calls).toBe(1)
    expect(result.isError).toBe(true)
  })

  test('keeps the error identity of a failure while replacing its content', async () => {
    const tools = new ToolsService()
    tools.register(
      counter({
        execute: () => Promise.reject(new Error('boom')),
        finalizeContent: () => [{ type: 'text', text: 'short' }],
      }),
    )
    const result = await runOne(tools, 'counter')
    expect(result).toEqual({
      isError: true,
      error: { message: 'boom', info: { name: 'ToolExecutionError', code: 'TOOL_ERROR' } },
      content: [{ type: 'text', text: 'short' }],
    })
  })
})

describe('tools/result', () => {
  test('observers get the frozen execution and a deep-frozen result', async () => {
    const tools = new ToolsService()
    tools.register(
      counter({
        execute: (_args, ctx) => {
          ctx.deferContext({ role: 'user', content: [{ type: 'text', text: 'ctx' }] })
          return Promise.resolve({ n: 1 })
        },
      }),
    )
    const seen: [ToolExecution, ToolExecutionResult][] = []
    tools.on('tools/result', (exec, result) => {
      seen.push([exec, result])
    })
    await runOne(tools, 'counter', { deep: { list: [1] } })
    const [exec, result] = seen[0] ?? []
    expect(Object.isFrozen(exec)).toBe(true)
    expect(Object.isFrozen(exec?.arguments)).toBe(true)
    expect(Object.isFrozen((exec?.arguments as { deep: { list: number[] } }).deep.list)).toBe(true)
    expect(Object.isFrozen(result)).toBe(true)
    expect(Object.isFrozen(result?.content)).toBe(true)
    expect(Object.isFrozen(result?.content[0])).toBe(true)
    expect(Object.isFrozen(result?.value)).toBe(true)
    expect(Object.isFrozen(result?.meta)).toBe(true)
    expect(Object.isFrozen(result?.additionalContexts)).toBe(true)
    expect(Object.isFrozen(result?.additionalContexts?.[0]?.content[0])).toBe(true)
  })

  test('observers of failures get a deep-frozen error', async () => {
    const tools = new ToolsService()
    let seen: ToolExecutionResult | undefined
    tools.on('tools/result', (_exec, result) => {
      seen = result
    })
    await runOne(tools, 'missing')
    expect(Object.isFrozen(seen)).toBe(true)
    expect(seen?.isError && Object.isFrozen(seen.error)).toBe(true)
    expect(seen?.isError && Object.isFrozen(seen.error.info)).toBe(true)
  })

  test('a throwing observer is caught and later observers still run', async () => {
    const tools = new ToolsService()
    tools.register(counter())
    let later = 0
    tools.on('tools/result', () => {
      throw new Error('observer bug')
    })
    tools.on('tools/result', () => {
      later++
    })
    const result = await runOne(tools, 'counter')
    expect(result.isError).toBe(false)
    expect(later).toBe(1)
  })

  test('a rejecting async observer is caught', async () => {
    const tools = new ToolsService()
    tools.register(counter())
    tools.on('tools/result', () => Promise.reject(new Error('async observer bug')) as unknown as void)
    const result = await runOne(tools, 'counter')
    await delay(5)
    expect(result.isError).toBe(false)
  })
})
