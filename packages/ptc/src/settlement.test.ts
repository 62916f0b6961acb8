/**
 * The scheduler's bounded drain at the seam, over the fake runtime (real
 * backends: test/ptc/settlement.test.ts). These pin down ordering and
 * bookkeeping; they prove nothing about a backend.
 */
import { createNativeExecutor, defineTool, type SessionEvent, type ToolExecutionResult } from '@ptc/tools'
import { installTimeoutPolicy } from '@ptc/tools/timeout'
import { describe, expect, test } from 'vitest'
import { createPtcExecutor } from './executor.js'
import { withHostedPrograms } from './hosted.js'
import { FakeFailure, FakeRuntime } from './testing/fake-runtime.js'
import { ptcHarness, sleep, text, type PtcHarness, type PtcHarnessOptions } from './testing/fixtures.js'

/** The harness plus `hang`: a concurrency-safe tool that ignores its signal and settles only when released. */
function withHang(runtime: FakeRuntime, options?: PtcHarnessOptions): PtcHarness & { release: () => void } {
  const h = ptcHarness(runtime, options)
  const waiting: (() => void)[] = []
  h.tools.register(
    defineTool({
      name: 'hang',
      description: 'Ignores its signal.',
      parameters: {},
      output: {
        schema: { type: 'object', additionalProperties: false, properties: { ok: { type: 'boolean' } } },
        render: () => [{ type: 'text', text: 'ok' }],
      },
      isConcurrencySafe: () => true,
      execute: () => new Promise<{ ok: boolean }>((resolve) => waiting.push(() => resolve({ ok: true }))),
    }),
  )
  return Object.assign(h, { release: () => waiting.splice(0).forEach((release) => release()) })
}

const settles = (h: PtcHarness): SessionEvent[] => h.session.events.filter((e) => e.type === 'tool/ptc-dispatch')
const codeOf = (e: SessionEvent | undefined): unknown =>
  (e?.error as { info?: { code?: string } } | undefined)?.info?.code

async function eventually(check: () => boolean, ms = 5000): Promise<void> {
  const until = Date.now() + ms
  while (!check()) {
    if (Date.now() > until) throw new Error('condition not met in time')
    await sleep(10)
  }
}

describe('bounded drain at run end (fake runtime)', () => {
  test('a call that settled behind an abandoned one commits normally, in submission order', async () => {
    const runtime = new FakeRuntime()
    const h = withHang(runtime)
    const code = runtime.define('fire-two', async (tools) => {
      void tools.hang!({}).catch(() => undefined)
      void tools.lookup!({ key: 'b' }).catch(() => undefined)
      await sleep(20)
      return 'done'
    })
    const result = await h.runCode(code)
    expect(text(result)).toBe('done')
    expect(settles(h).map((e) => [e.subCallId, e.name, e.isError, e.abandoned])).toEqual([
      ['run1:ptc:1', 'hang', true, true],
      ['run1:ptc:2', 'lookup', false, undefined],
    ])
    expect(codeOf(settles(h)[0])).toBe('ABORTED')
    h.release()
  })

  test('the pipeline still awaits an abandoned body: tools/result fires when it settles, after run_code returned', async () => {
    const runtime = new FakeRuntime()
    const h = withHang(runtime)
    const seen: ToolExecutionResult[] = []
    h.tools.on('tools/result', (exec, result) => {
      if (exec.name === 'hang') seen.push(result)
    })
    const code = runtime.define('fire-hang', async (tools) => {
      void tools.hang!({}).catch(() => undefined)
      await sleep(10)
      return 1
    })
    const result = await h.runCode(code)
    expect(text(result)).toBe('1')
    expect(seen).toEqual([])
    h.release()
    await eventually(() => h.session.events.some((e) => e.type === 'tool/ptc-dispatch-late'))
    expect(seen).toHaveLength(1)
    expect(seen[0]?.isError && seen[0].error.info?.code).toBe('ABORTED')
    expect(settles(h)).toHaveLength(1)
  })

  test('a call stuck in a pre-execute listener that ignores the abort is bounded too', async () => {
    const runtime = new FakeRuntime()
    const h = withHang(runtime)
    h.tools.on('tools/pre-execute', (exec, next) => (exec.name === 'write' ? new Promise(() => {}) : next()))
    const code = runtime.define('stuck-policy', async (tools) => {
      void tools.write!({ key: 'k' }).catch(() => undefined)
      await sleep(10)
      return 'done'
    })
    const result = await h.runCode(code)
    expect(text(result)).toBe('done')
    expect(settles(h).map((e) => [e.name, e.abandoned])).toEqual([['write', true]])
  })

  test('drainGraceMs: 0 abandons at once; a wall timeout abandons as TOOL_TIMEOUT', async () => {
    const runtime = new FakeRuntime()
    const h = withHang(runtime, { drainGraceMs: 0 })
    // A program whose run ends by the wall while a stubborn call is in flight.
    const code = runtime.define('timeout', async (tools) => {
      void tools.hang!({}).catch(() => undefined)
      await sleep(10)
      return new FakeFailure('timeout', 'wall-clock limit of 50 ms exceeded')
    })
    const result = await h.runCode(code)
    expect(text(result)).toMatch(/^Error: code run failed \(timeout\)/)
    expect(settles(h).map((e) => [e.name, codeOf(e), e.abandoned])).toEqual([['hang', 'TOOL_TIMEOUT', true]])
    h.release()
  })

  test('drainGraceMs must be a finite number from 0 to the longest timer delay', () => {
    for (const bad of [-1, Number.NaN, Number.POSITIVE_INFINITY, '5' as unknown as number]) {
      expect(() => createPtcExecutor({ runtime: new FakeRuntime(), drainGraceMs: bad })).toThrow(/drainGraceMs/)
      expect(() => withHostedPrograms(createNativeExecutor(), { drainGraceMs: bad })).toThrow(/drainGraceMs/)
    }
    // A longer grace would fire at once: every stopped call abandoned without waiting.
    const tooLong = "drainGraceMs must be at most 2147483647 ms (a timer's longest delay), not 2147483648"
    expect(() => createPtcExecutor({ runtime: new FakeRuntime(), drainGraceMs: 2 ** 31 })).toThrow(tooLong)
    expect(() => withHostedPrograms(createNativeExecutor(), { drainGraceMs: 2 ** 31 })).toThrow(tooLong)
    expect(() => createPtcExecutor({ runtime: new FakeRuntime(), drainGraceMs: 2 ** 31 - 1 })).not.toThrow()
  })
})

/**
 * The harness plus `stuck`: a concurrency-safe tool with a budget that ignores
 * its signal and settles `settleAfterMs` after it started (or when released),
 * and `slow`: a safe tool without a budget that settles after `delayMs`.
 * The timeout policy is installed.
 */
function withStuck(
  runtime: FakeRuntime,
  options: PtcHarnessOptions & { timeoutMs?: number; settleAfterMs?: number } = {},
): PtcHarness & { release: () => void } {
  const { timeoutMs = 50, settleAfterMs, ...harnessOptions } = options
  const h = ptcHarness(runtime, harnessOptions)
  const waiting: (() => void)[] = []
  const output = {
    schema: { type: 'object', additionalProperties: false, properties: { ok: { type: 'boolean' } } },
    render: () => [{ type: 'text' as const, text: 'ok' }],
  } as const
  h.tools.register(
    defineTool({
      name: 'stuck',
      description: 'Ignores its signal.',
      parameters: {},
      output,
      timeoutMs,
      isConcurrencySafe: () => true,
      execute: () =>
        new Promise<{ ok: boolean }>((resolve) => {
          waiting.push(() => resolve({ ok: true }))
          if (settleAfterMs !== undefined) setTimeout(() => resolve({ ok: true }), settleAfterMs)
        }),
    }),
  )
  h.tools.register(
    defineTool({
      name: 'slow',
      description: 'Settles after a delay.',
      parameters: { delayMs: { type: 'integer', required: true } },
      output,
      isConcurrencySafe: () => true,
      execute: async ({ delayMs }) => {
        await sleep(delayMs)
        return { ok: true }
      },
    }),
  )
  installTimeoutPolicy(h.tools)
  return Object.assign(h, { release: () => waiting.splice(0).forEach((release) => release()) })
}

const trail = (h: PtcHarness): unknown[][] =>
  h.session.events.filter((e) => e.type.startsWith('tool/ptc-dispatch')).map((e) => [e.type, e.name, e.abandoned])

describe('mid-run abandonment of a call told to stop (fake runtime)', () => {
  test('a call abandoned behind a slower earlier call commits in submission order; its late settle is logged after its abandonment', async () => {
    const runtime = new FakeRuntime()
    // Abandoned at 50 + 20 ms; its body settles at 1 000 ms, before the head (1 500 ms) lets it commit. The gaps
    // are wide because a loaded event loop can fire the 50 ms timeout late: with the body settling at 120 ms, a
    // stall of 70 ms let it settle before the grace was armed, and it was not abandoned.
    const h = withStuck(runtime, { drainGraceMs: 20, settleAfterMs: 1_000 })
    const order: string[] = []
    const code = runtime.define('behind-slow', async (tools) => {
      const slow = tools.slow!({ delayMs: 1_500 }).then(() => order.push('slow'))
      const stuck = tools.stuck!({}).then(
        () => order.push('stuck resolved'),
        (e: Error) => order.push(`stuck rejected: ${e.message}`),
      )
      await Promise.all([slow, stuck])
      return 'done'
    })
    const result = await h.runCode(code)
    expect(text(result)).toBe('done')
    expect(order).toEqual([
      'slow',
      expect.stringMatching(/^stuck rejected: tool call timed out after 50 ms and was abandoned/),
    ])
    expect(trail(h)).toEqual([
      ['tool/ptc-dispatch-start', 'slow', undefined],
      ['tool/ptc-dispatch-start', 'stuck', undefined],
      ['tool/ptc-dispatch', 'slow', undefined],
      ['tool/ptc-dispatch', 'stuck', true],
      ['tool/ptc-dispatch-late', 'stuck', undefined],
    ])
    expect(codeOf(settles(h)[1])).toBe('TOOL_TIMEOUT')
  })

  test('a body that settles within the grace after its timeout is not abandoned: the program gets the policy timeout', async () => {
    const runtime = new FakeRuntime()
    const h = withStuck(runtime, { timeoutMs: 20, drainGraceMs: 1000, settleAfterMs: 60 })
    const code = runtime.define('within-grace', async (tools) =>
      tools.stuck!({}).then(
        () => 'resolved',
        (e: Error) => e.message,
      ),
    )
    const result = await h.runCode(code)
    expect(text(result)).toBe('tool call timed out after 20 ms')
    expect(settles(h).map((e) => [e.name, codeOf(e), e.abandoned])).toEqual([['stuck', 'TOOL_TIMEOUT', undefined]])
    expect(h.session.events.filter((e) => e.type === 'tool/ptc-dispatch-late')).toEqual([])
  })

  test('a wrapper that aborts its body for another reason abandons the call as ABORTED', async () => {
    const runtime = new FakeRuntime()
    const h = withStuck(runtime, { timeoutMs: 60_000, drainGraceMs: 20 })
    h.tools.on('tools/execute', async (exec, next) => {
      if (exec.name !== 'stuck') return next()
      const outer = exec.signal
      const controller = new AbortController()
      setTimeout(() => controller.abort(new Error('budget policy: out of credits')), 20)
      exec.signal = controller.signal
      try {
        return await next()
      } finally {
        exec.signal = outer
      }
    })
    const code = runtime.define('aborted-mid-run', async (tools) => {
      const message = await tools.stuck!({}).then(
        () => 'resolved',
        (e: Error) => e.message,
      )
      await tools.lookup!({ key: 'after' })
      return message
    })
    const result = await h.runCode(code)
    expect(text(result)).toMatch(
      /^the tool call was aborted and was abandoned: it ignored its abort signal and had not settled 20 ms later$/,
    )
    expect(settles(h).map((e) => [e.name, codeOf(e), e.abandoned])).toEqual([
      ['stuck', 'ABORTED', true],
      ['lookup', undefined, undefined],
    ])
    h.release()
    await eventually(() => h.session.events.some((e) => e.type === 'tool/ptc-dispatch-late'))
  })

  test("the run's own end is bounded by the drain, not by the call's grace: a budgeted call in flight at return is abandoned as ABORTED", async () => {
    const runtime = new FakeRuntime()
    const h = withStuck(runtime, { timeoutMs: 60_000 })
    const code = runtime.define('return-early', async (tools) => {
      void tools.stuck!({}).catch(() => undefined)
      await sleep(10)
      return 'done'
    })
    const result = await h.runCode(code)
    expect(text(result)).toBe('done')
    const [settle] = settles(h)
    expect(settle).toMatchObject({ name: 'stuck', isError: true, abandoned: true })
    expect(codeOf(settle)).toBe('ABORTED')
    expect((settle?.error as { message?: string } | undefined)?.message).toMatch(
      /^the program ended and the tool call was abandoned/,
    )
    h.release()
  })
})
