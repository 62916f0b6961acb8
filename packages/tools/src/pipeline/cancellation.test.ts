import { getEventListeners } from 'node:events'
import { describe, expect, test } from 'vitest'
import { ToolsService } from '../registry/service.js'
import type { ToolDispatchExecution, ToolRunContext } from '../types/tool.js'
import { codeOf, deferred, delay, runOne, textOf, tool } from './fixtures/tool.js'

/** Every phase a call can go through, counted. */
function instrumented(
  tools: ToolsService,
  body: (ctx: ToolRunContext) => Promise<unknown> = () => Promise.resolve('done'),
): Record<string, number> {
  const counts: Record<string, number> = { pre: 0, exec: 0, body: 0, post: 0, result: 0 }
  const bump = (key: string): void => {
    counts[key] = (counts[key] ?? 0) + 1
  }
  tools.register(
    tool('t', {
      execute: (_args, ctx) => {
        bump('body')
        return body(ctx)
      },
    }),
  )
  tools.on('tools/pre-execute', (_e, next) => {
    bump('pre')
    return next()
  })
  tools.on('tools/execute', (_e, next) => {
    bump('exec')
    return next()
  })
  tools.on('tools/post-execute', (_e, _r, next) => {
    bump('post')
    return next()
  })
  tools.on('tools/result', () => bump('result'))
  return counts
}

describe('cancellation', () => {
  test('a pre-aborted call is ABORTED_BEFORE_DISPATCH and runs no phase', async () => {
    const tools = new ToolsService()
    const counts = instrumented(tools)
    const controller = new AbortController()
    controller.abort()
    const result = await runOne(tools, 't', {}, { signal: controller.signal })
    expect(result.isError && result.error.info).toEqual({ name: 'ToolAbortedError', code: 'ABORTED_BEFORE_DISPATCH' })
    expect(textOf(result)).toMatch(/^Error: /)
    expect(counts).toEqual({ pre: 0, exec: 0, body: 0, post: 0, result: 1 })
  })

  test('an abort during pre-execute stops the call before dispatch', async () => {
    const tools = new ToolsService()
    const counts = instrumented(tools)
    const controller = new AbortController()
    tools.on('tools/pre-execute', async (_e, next) => {
      controller.abort()
      return next()
    })
    const result = await runOne(tools, 't', {}, { signal: controller.signal })
    expect(codeOf(result)).toBe('ABORTED_BEFORE_DISPATCH')
    expect(counts['body']).toBe(0)
    expect(counts['exec']).toBe(0)
  })

  test('an abort after the body started turns a success into ABORTED', async () => {
    const tools = new ToolsService()
    const controller = new AbortController()
    const counts = instrumented(tools, async () => {
      controller.abort()
      return 'done anyway'
    })
    const result = await runOne(tools, 't', {}, { signal: controller.signal })
    expect(result.isError && result.error.info).toEqual({ name: 'ToolAbortedError', code: 'ABORTED' })
    expect(result.value).toBeUndefined()
    expect(counts['body']).toBe(1)
  })

  test('an abort after the body started leaves a failure as it is', async () => {
    const tools = new ToolsService()
    const controller = new AbortController()
    instrumented(tools, async () => {
      controller.abort()
      throw new Error('real failure')
    })
    const result = await runOne(tools, 't', {}, { signal: controller.signal })
    expect(codeOf(result)).toBe('TOOL_ERROR')
    expect(result.isError && result.error.message).toBe('real failure')
  })

  test('an abort after the body leaves an invalid output as it is', async () => {
    const tools = new ToolsService()
    const controller = new AbortController()
    tools.register(
      tool('t', {
        output: { schema: { type: 'string' }, render: () => [] },
        execute: async () => {
          controller.abort()
          return 1
        },
      }),
    )
    expect(codeOf(await runOne(tools, 't', {}, { signal: controller.signal }))).toBe('INVALID_TOOL_OUTPUT')
  })

  test('an abort during post-execute still turns the success into ABORTED', async () => {
    const tools = new ToolsService()
    const controller = new AbortController()
    instrumented(tools)
    tools.on('tools/post-execute', async (_e, _r, next) => {
      controller.abort()
      return next()
    })
    expect(codeOf(await runOne(tools, 't', {}, { signal: controller.signal }))).toBe('ABORTED')
  })

  test('a success produced by a wrapper without invoking the body becomes ABORTED_BEFORE_DISPATCH on abort', async () => {
    const tools = new ToolsService()
    const counts = instrumented(tools)
    const controller = new AbortController()
    tools.on('tools/execute', async () => {
      controller.abort()
      return { isError: false, value: 'cached', content: [] }
    })
    const result = await runOne(tools, 't', {}, { signal: controller.signal })
    expect(codeOf(result)).toBe('ABORTED_BEFORE_DISPATCH')
    expect(counts['body']).toBe(0)
  })

  test('bodies are awaited, never raced: the result waits for a body that ignores the signal', async () => {
    const tools = new ToolsService()
    const controller = new AbortController()
    let bodyFinished = false
    instrumented(tools, async () => {
      await delay(40)
      bodyFinished = true
      return 'late'
    })
    const pending = runOne(tools, 't', {}, { signal: controller.signal })
    await delay(5)
    controller.abort()
    const result = await pending
    expect(bodyFinished).toBe(true)
    expect(codeOf(result)).toBe('ABORTED')
  })

  test("with no wrapper replacing it, the body receives the batch's signal, which aborts with the caller's reason", async () => {
    const tools = new ToolsService()
    const started = deferred()
    let policies: AbortSignal | undefined
    let seen: AbortSignal | undefined
    tools.on('tools/pre-execute', (exec, next) => {
      policies = exec.signal
      return next()
    })
    instrumented(tools, async (ctx) => {
      seen = ctx.signal
      started.resolve()
      await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve, { once: true }))
      return ctx.signal.reason as string
    })
    const controller = new AbortController()
    const pending = runOne(tools, 't', {}, { signal: controller.signal })
    await started.promise
    expect(seen).toBe(policies)
    expect(seen).not.toBe(controller.signal)
    controller.abort('the reason')
    expect(seen?.reason).toBe('the reason')
    expect(codeOf(await pending)).toBe('ABORTED')
  })

  test('one signal shared by many concurrent direct calls whose bodies listen: no listener-leak warning, none left on it, an abort stops them all', async () => {
    const tools = new ToolsService()
    const warnings: Error[] = []
    const onWarning = (warning: Error): void => void warnings.push(warning)
    process.on('warning', onWarning)
    try {
      let listening = 0
      const allListening = deferred()
      instrumented(tools, async (ctx) => {
        const stopped = new Promise((resolve) => ctx.signal.addEventListener('abort', resolve, { once: true }))
        if (++listening === 30) allListening.resolve()
        await stopped
        return null
      })
      const controller = new AbortController()
      const pending = Promise.all(
        Array.from({ length: 30 }, () => runOne(tools, 't', {}, { signal: controller.signal })),
      )
      await allListening.promise
      expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1)
      controller.abort()
      expect((await pending).map(codeOf)).toEqual(Array.from({ length: 30 }, () => 'ABORTED'))
      await new Promise((resolve) => setImmediate(resolve))
      expect(warnings.map((w) => w.name)).toEqual([])
      expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0)
    } finally {
      process.off('warning', onWarning)
    }
  })
})

describe('tools/execute signal replacement', () => {
  /** A wrapper that swaps in its own signal and restores the previous one after. */
  function replacingWrapper(tools: ToolsService): { controller: AbortController; seenAfter: AbortSignal[] } {
    const controller = new AbortController()
    const seenAfter: AbortSignal[] = []
    tools.on('tools/execute', async (exec: ToolDispatchExecution, next) => {
      const outer = exec.signal
      exec.signal = controller.signal
      try {
        return await next()
      } finally {
        exec.signal = outer
        seenAfter.push(exec.signal)
      }
    })
    return { controller, seenAfter }
  }

  test("the body sees an abort of the wrapper's replacement signal", async () => {
    const tools = new ToolsService()
    const started = deferred()
    let reason: unknown
    instrumented(tools, async (ctx) => {
      started.resolve()
      await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve(), { once: true }))
      reason = ctx.signal.reason
      throw new Error('stopped')
    })
    const { controller } = replacingWrapper(tools)
    const caller = new AbortController()
    const pending = runOne(tools, 't', {}, { signal: caller.signal })
    await started.promise
    controller.abort('wrapper reason')
    const result = await pending
    expect(reason).toBe('wrapper reason')
    expect(caller.signal.aborted).toBe(false)
    expect(codeOf(result)).toBe('TOOL_ERROR')
  })

  test("a wrapper's replacement cannot detach the caller's cancellation: the body sees the caller abort", async () => {
    const tools = new ToolsService()
    const started = deferred()
    let reason: unknown
    instrumented(tools, async (ctx) => {
      started.resolve()
      await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve(), { once: true }))
      reason = ctx.signal.reason
      return 'finished'
    })
    const { controller } = replacingWrapper(tools)
    const caller = new AbortController()
    const pending = runOne(tools, 't', {}, { signal: caller.signal })
    await started.promise
    caller.abort('caller reason')
    const result = await pending
    expect(reason).toBe('caller reason')
    expect(controller.signal.aborted).toBe(false)
    expect(codeOf(result)).toBe('ABORTED')
  })

  test('a caller abort that happened before the wrapper replaced the signal is seen by the body at once', async () => {
    const tools = new ToolsService()
    let aborted: boolean | undefined
    instrumented(tools, async (ctx) => {
      aborted = ctx.signal.aborted
      return null
    })
    const caller = new AbortController()
    tools.on('tools/pre-execute', async (_e, next) => {
      const decision = await next()
      return decision
    })
    tools.on('tools/execute', async (exec, next) => {
      caller.abort()
      exec.signal = new AbortController().signal
      return next()
    })
    await runOne(tools, 't', {}, { signal: caller.signal })
    expect(aborted).toBe(true)
  })

  test('after the call, later stages see the signal the call started with and no fused listener is left behind', async () => {
    const tools = new ToolsService()
    instrumented(tools)
    const { controller, seenAfter } = replacingWrapper(tools)
    const caller = new AbortController()
    const signals: AbortSignal[] = []
    tools.on('tools/pre-execute', (exec, next) => {
      signals.push(exec.signal)
      return next()
    })
    tools.on('tools/post-execute', (exec, _r, next) => {
      signals.push(exec.signal)
      return next()
    })
    tools.on('tools/result', (exec) => {
      signals.push(exec.signal)
    })
    const before = getEventListeners(caller.signal, 'abort').length
    const result = await runOne(tools, 't', {}, { signal: caller.signal })
    expect(result.isError).toBe(false)
    const [batch] = signals
    expect(signals).toEqual([batch, batch, batch])
    expect(seenAfter).toEqual([batch])
    expect(getEventListeners(caller.signal, 'abort')).toHaveLength(before)
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0)
  })

  test('a wrapper cannot change the call identity', async () => {
    const tools = new ToolsService()
    let bodyArgs: unknown
    tools.register(
      tool('t', {
        execute: (args) => {
          bodyArgs = args
          return Promise.resolve(null)
        },
      }),
    )
    const innerSaw: string[] = []
    tools.on('tools/execute', (exec, next) => {
      try {
        ;(exec as { name: string }).name = 'other'
      } catch {
        // identity is read-only
      }
      return next()
    })
    tools.on('tools/execute', (exec, next) => {
      innerSaw.push(exec.name)
      return next()
    })
    const postSaw: string[] = []
    tools.on('tools/post-execute', (exec, _r, next) => {
      postSaw.push(exec.name)
      return next()
    })
    const result = await runOne(tools, 't', { a: 1 })
    expect(result.isError).toBe(false)
    expect(innerSaw).toEqual(['t'])
    expect(postSaw).toEqual(['t'])
    expect(bodyArgs).toEqual({ a: 1 })
  })

  test('a wrapper that replaces the signal with something that is not a signal fails the call and the body never runs', async () => {
    const tools = new ToolsService()
    const counts = instrumented(tools)
    tools.on('tools/execute', (exec, next) => {
      exec.signal = undefined as unknown as AbortSignal
      return next()
    })
    const result = await runOne(tools, 't')
    expect(result.isError).toBe(true)
    expect(counts['body']).toBe(0)
  })
})
