import { afterEach, describe, expect, test, vi } from 'vitest'
import { ToolTimeoutError } from '../errors.js'
import { agent, codeOf, deferred, delay, runOne, textOf, tool } from '../pipeline/fixtures/tool.js'
import { ToolsService } from '../registry/service.js'
import { installTimeoutPolicy } from './index.js'

afterEach(() => {
  vi.useRealTimers()
})

/** A body that ignores its signal and succeeds after `ms`. */
const stubborn = (ms: number) => async (): Promise<string> => {
  await delay(ms)
  return 'finished'
}

describe('installTimeoutPolicy', () => {
  test('an overrun is TOOL_TIMEOUT even when the body ignores the signal, and the result waits for the body', async () => {
    const tools = new ToolsService()
    installTimeoutPolicy(tools)
    let finished = false
    tools.register(
      tool('slow', {
        timeoutMs: 10,
        execute: async () => {
          await delay(40)
          finished = true
          return 'finished'
        },
      }),
    )
    const result = await runOne(tools, 'slow')
    expect(finished).toBe(true)
    expect(result.isError && result.error).toEqual({
      message: 'tool call timed out after 10 ms',
      info: { name: 'ToolTimeoutError', code: 'TOOL_TIMEOUT' },
    })
    expect(textOf(result)).toBe('Error: tool call timed out after 10 ms')
  })

  test('a cooperative body sees its signal abort at the deadline with a ToolTimeoutError reason', async () => {
    const tools = new ToolsService()
    installTimeoutPolicy(tools)
    let reason: unknown
    tools.register(
      tool('slow', {
        timeoutMs: 5,
        execute: (_args, ctx) =>
          new Promise((_resolve, reject) => {
            ctx.signal.addEventListener('abort', () => {
              reason = ctx.signal.reason
              reject(ctx.signal.reason)
            })
          }),
      }),
    )
    const result = await runOne(tools, 'slow')
    expect(reason).toBeInstanceOf(ToolTimeoutError)
    expect(codeOf(result)).toBe('TOOL_TIMEOUT')
  })

  test('a caller abort that comes first stays ABORTED', async () => {
    const tools = new ToolsService()
    installTimeoutPolicy(tools)
    tools.register(tool('slow', { timeoutMs: 20, execute: stubborn(40) }))
    const controller = new AbortController()
    const pending = runOne(tools, 'slow', {}, { signal: controller.signal })
    await delay(2)
    controller.abort()
    expect(codeOf(await pending)).toBe('ABORTED')
  })

  test('a caller abort reaches a cooperative body through the policy signal, and stays a caller cancellation', async () => {
    const tools = new ToolsService()
    installTimeoutPolicy(tools)
    let reason: unknown
    tools.register(
      tool('slow', {
        timeoutMs: 1000,
        execute: (_args, ctx) =>
          new Promise((resolve) => {
            ctx.signal.addEventListener('abort', () => {
              reason = ctx.signal.reason
              resolve('stopped')
            })
          }),
      }),
    )
    const controller = new AbortController()
    const pending = runOne(tools, 'slow', {}, { signal: controller.signal })
    await delay(2)
    controller.abort('user pressed stop')
    const result = await pending
    expect(reason).toBe('user pressed stop')
    expect(codeOf(result)).toBe('ABORTED')
  })

  test('a call that finishes in time is unchanged and leaves no timer behind', async () => {
    vi.useFakeTimers()
    const tools = new ToolsService()
    installTimeoutPolicy(tools)
    const gate = deferred<string>()
    let timersDuringBody = -1
    tools.register(
      tool('quick', {
        timeoutMs: 1000,
        execute: () => {
          timersDuringBody = vi.getTimerCount()
          return gate.promise
        },
      }),
    )
    const pending = runOne(tools, 'quick')
    await vi.waitFor(() => expect(timersDuringBody).toBe(1))
    gate.resolve('ok')
    const result = await pending
    expect(result).toEqual({ isError: false, value: 'ok', content: [{ type: 'text', text: '"ok"' }] })
    expect(vi.getTimerCount()).toBe(0)
  })

  test('tools without a budget are untouched: no timer, the signal the policies saw, the same result', async () => {
    vi.useFakeTimers()
    const tools = new ToolsService()
    installTimeoutPolicy(tools)
    let timersDuringBody = -1
    let seen: AbortSignal | undefined
    let policies: AbortSignal | undefined
    tools.on('tools/pre-execute', (exec, next) => {
      policies = exec.signal
      return next()
    })
    tools.register(
      tool('plain', {
        execute: (_args, ctx) => {
          timersDuringBody = vi.getTimerCount()
          seen = ctx.signal
          return Promise.resolve('ok')
        },
      }),
    )
    const controller = new AbortController()
    const result = await runOne(tools, 'plain', {}, { signal: controller.signal })
    expect(timersDuringBody).toBe(0)
    expect(policies).toBeInstanceOf(AbortSignal)
    expect(seen).toBe(policies)
    expect(result).toEqual({ isError: false, value: 'ok', content: [{ type: 'text', text: '"ok"' }] })
  })

  test('a budget beyond the platform timer limit does not fire early', async () => {
    const tools = new ToolsService()
    installTimeoutPolicy(tools)
    tools.register(tool('patient', { timeoutMs: 3_000_000_000, execute: stubborn(20) }))
    const result = await runOne(tools, 'patient')
    expect(result.isError).toBe(false)
  })

  test('a budget beyond the platform timer limit still fires at its deadline', async () => {
    vi.useFakeTimers()
    const tools = new ToolsService()
    installTimeoutPolicy(tools)
    const budget = 3_000_000_000
    let aborted = false
    tools.register(
      tool('patient', {
        timeoutMs: budget,
        execute: (_args, ctx) =>
          new Promise((_resolve, reject) =>
            ctx.signal.addEventListener('abort', () => {
              aborted = true
              reject(ctx.signal.reason)
            }),
          ),
      }),
    )
    const pending = runOne(tools, 'patient')
    await vi.advanceTimersByTimeAsync(2 ** 31)
    expect(aborted).toBe(false)
    await vi.advanceTimersByTimeAsync(budget - 2 ** 31 + 1)
    expect(aborted).toBe(true)
    expect(codeOf(await pending)).toBe('TOOL_TIMEOUT')
  })

  test('the disposer removes the policy', async () => {
    const tools = new ToolsService()
    const dispose = installTimeoutPolicy(tools)
    dispose()
    tools.register(tool('slow', { timeoutMs: 5, execute: stubborn(20) }))
    expect((await runOne(tools, 'slow')).isError).toBe(false)
  })

  test("installed on a scoped view, it applies to that agent's calls only", async () => {
    const tools = new ToolsService()
    const a = agent('a')
    installTimeoutPolicy(tools.scoped(a))
    tools.register(tool('slow', { timeoutMs: 5, execute: stubborn(20) }))
    expect(codeOf(await runOne(tools, 'slow', {}, { agent: a }))).toBe('TOOL_TIMEOUT')
    expect((await runOne(tools, 'slow', {}, { agent: agent('b') })).isError).toBe(false)
  })

  test('a timeout fires post-execute and finalizeContent with the TOOL_TIMEOUT result', async () => {
    const tools = new ToolsService()
    installTimeoutPolicy(tools)
    const seen: (string | undefined)[] = []
    tools.register(
      tool('slow', {
        timeoutMs: 5,
        execute: stubborn(20),
        finalizeContent: (_exec, result) => {
          seen.push(`final ${result.isError ? result.error.info?.code : 'ok'}`)
          return undefined
        },
      }),
    )
    tools.on('tools/post-execute', (_exec, result, next) => {
      seen.push(`post ${result.isError ? result.error.info?.code : 'ok'}`)
      return next()
    })
    await runOne(tools, 'slow')
    expect(seen).toEqual(['post TOOL_TIMEOUT', 'final TOOL_TIMEOUT'])
  })
})
