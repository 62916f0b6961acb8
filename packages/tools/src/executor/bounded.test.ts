import { getEventListeners } from 'node:events'
import { describe, expect, test } from 'vitest'
import { agent, call, codeOf, deferred, delay, runBatch, tool } from '../pipeline/fixtures/tool.js'
import { ToolsService } from '../registry/service.js'
import { MemorySession } from '../session/memory.js'
import { installTimeoutPolicy } from '../timeout/index.js'
import type { SessionEvent } from '../types/scope.js'
import { MAX_ABANDONED_BODIES } from './abandoned.js'
import { createNativeExecutor } from './native.js'

/** A service with `stubborn`: a body that ignores its signal and settles only when released. */
function stubborn(options: { timeoutMs?: number; drainGraceMs?: number } = {}) {
  const release = deferred<{ ok: boolean }>()
  const tools = new ToolsService()
  const results: unknown[] = []
  let settled = false
  tools.register(
    tool('stubborn', {
      ...(options.timeoutMs !== undefined && { timeoutMs: options.timeoutMs }),
      execute: () => release.promise.finally(() => (settled = true)),
    }),
  )
  tools.register(tool('quick', { execute: () => Promise.resolve({ quick: true }) }))
  tools.on('tools/result', (exec, result) => {
    if (exec.name === 'stubborn') results.push(result.isError ? result.error.info?.code : 'ok')
  })
  if (options.drainGraceMs !== undefined)
    tools.setExecutor(createNativeExecutor({ drainGraceMs: options.drainGraceMs }))
  const session = new MemorySession()
  const owner = agent('a', { session })
  return { tools, session, owner, release, results, isSettled: () => settled }
}

const ofType = (events: readonly SessionEvent[], type: string): SessionEvent[] => events.filter((e) => e.type === type)
const errorCode = (event: SessionEvent | undefined): unknown =>
  (event?.error as { info?: { code?: string } } | undefined)?.info?.code

async function eventually(check: () => boolean, ms = 5000): Promise<void> {
  const until = Date.now() + ms
  while (!check()) {
    if (Date.now() > until) throw new Error('condition not met in time')
    await delay(10)
  }
}

describe('bounded drain of model-direct calls', () => {
  test('a timed-out body that ignores its signal is abandoned as TOOL_TIMEOUT; its late settle is logged', async () => {
    const h = stubborn({ timeoutMs: 50 })
    installTimeoutPolicy(h.tools)
    const batch = await runBatch(h.tools, [call('stubborn', {}, 's1')], { agent: h.owner, log: { turn: 1, step: 1 } })
    // The batch came back while the body was still pending: it settles only when released below.
    expect(h.isSettled()).toBe(false)
    const result = batch.results[0]?.result
    expect(result !== undefined && codeOf(result)).toBe('TOOL_TIMEOUT')
    expect(result?.isError === true && result.error.message).toMatch(
      /^tool call timed out after 50 ms and was abandoned: it ignored its abort signal and had not settled 100 ms later$/,
    )
    const [logged] = ofType(h.session.events, 'tool/result')
    expect(logged).toMatchObject({ callId: 's1', name: 'stubborn', isError: true, abandoned: true })
    expect(errorCode(logged)).toBe('TOOL_TIMEOUT')
    // The pipeline still awaits the body: tools/result has not fired yet.
    expect(h.results).toEqual([])

    h.release.resolve({ ok: true })
    await eventually(() => ofType(h.session.events, 'tool/result-late').length === 1)
    const [late] = ofType(h.session.events, 'tool/result-late')
    // The timeout policy's own timer fired, so the late outcome is TOOL_TIMEOUT too.
    expect(late).toMatchObject({ callId: 's1', name: 'stubborn', isError: true, turn: 1, step: 1 })
    expect(errorCode(late)).toBe('TOOL_TIMEOUT')
    expect(h.results).toEqual(['TOOL_TIMEOUT'])
    expect(ofType(h.session.events, 'tool/result')).toHaveLength(1)
  })

  test('a body that ignores the batch abort is abandoned as ABORTED; the other results come back in order', async () => {
    const h = stubborn()
    const controller = new AbortController()
    const running = runBatch(h.tools, [call('quick', {}, 'q1'), call('stubborn', {}, 's1')], {
      agent: h.owner,
      log: { turn: 1, step: 2 },
      signal: controller.signal,
    })
    await delay(20)
    controller.abort(new Error('stop'))
    const batch = await running
    expect(batch.results.map((r) => [r.callId, r.result.isError ? r.result.error.info?.code : 'ok'])).toEqual([
      ['q1', 'ok'],
      ['s1', 'ABORTED'],
    ])
    expect(ofType(h.session.events, 'tool/result').map((e) => [e.callId, e.abandoned])).toEqual([
      ['q1', undefined],
      ['s1', true],
    ])
    h.release.resolve({ ok: true })
    await eventually(() => ofType(h.session.events, 'tool/result-late').length === 1)
    expect(errorCode(ofType(h.session.events, 'tool/result-late')[0])).toBe('ABORTED')
  })

  test('a body that settles within the grace after its timeout is not abandoned', async () => {
    const h = stubborn({ timeoutMs: 20, drainGraceMs: 1000 })
    installTimeoutPolicy(h.tools)
    setTimeout(() => h.release.resolve({ ok: true }), 60)
    const batch = await runBatch(h.tools, [call('stubborn', {}, 's1')], { agent: h.owner, log: { turn: 1, step: 1 } })
    const result = batch.results[0]?.result
    expect(result !== undefined && codeOf(result)).toBe('TOOL_TIMEOUT')
    expect(h.isSettled()).toBe(true)
    expect(ofType(h.session.events, 'tool/result')[0]?.abandoned).toBeUndefined()
    expect(ofType(h.session.events, 'tool/result-late')).toEqual([])
  })

  test('a slow body nobody told to stop is awaited, never abandoned', async () => {
    const h = stubborn({ drainGraceMs: 0 })
    let returned = false
    const running = runBatch(h.tools, [call('stubborn', {}, 's1')], { agent: h.owner, log: { turn: 1, step: 1 } }).then(
      (batch) => {
        returned = true
        return batch
      },
    )
    await delay(100)
    expect(returned).toBe(false)
    h.release.resolve({ ok: true })
    const batch = await running
    expect(batch.results[0]?.result.isError).toBe(false)
    expect(ofType(h.session.events, 'tool/result')[0]?.abandoned).toBeUndefined()
  })

  test('without wrappers a call adds no abort listener to the batch signal (only the batch adds one)', async () => {
    const tools = new ToolsService()
    const controller = new AbortController()
    const counts: number[] = []
    tools.register(
      tool('probe', {
        isConcurrencySafe: () => true,
        execute: async () => {
          await delay(5)
          counts.push(getEventListeners(controller.signal, 'abort').length)
          return null
        },
      }),
    )
    await runBatch(
      tools,
      Array.from({ length: 10 }, (_, i) => call('probe', {}, `p${i}`)),
      { signal: controller.signal },
    )
    expect(Math.max(...counts)).toBe(1)
  })

  test(`past ${MAX_ABANDONED_BODIES} abandoned bodies of a tool still running, its direct calls fail at once; once they end, it is called again`, async () => {
    const h = stubborn({ timeoutMs: 1, drainGraceMs: 1 })
    installTimeoutPolicy(h.tools)
    let started = 0
    h.tools.on('tools/execute', (exec, next) => {
      if (exec.name === 'stubborn') started++
      return next()
    })
    const calls = Array.from({ length: MAX_ABANDONED_BODIES + 40 }, (_, i) => call('stubborn', {}, `s${i}`))
    // One call a batch, as a model retrying would: each is abandoned before the next starts.
    const codes: (string | undefined)[] = []
    let refusal = ''
    for (const one of calls) {
      const result = (await runBatch(h.tools, [one], { agent: h.owner, log: { turn: 1, step: 1 } })).results[0]?.result
      if (result === undefined) throw new Error('no result')
      codes.push(codeOf(result))
      if (result.isError && codeOf(result) === 'TOOL_ERROR') refusal = result.error.message
    }
    expect(started).toBe(MAX_ABANDONED_BODIES)
    expect(codes).toEqual([
      ...Array.from({ length: MAX_ABANDONED_BODIES }, () => 'TOOL_TIMEOUT'),
      ...Array.from({ length: 40 }, () => 'TOOL_ERROR'),
    ])
    expect(refusal).toBe(
      `${MAX_ABANDONED_BODIES} earlier calls of stubborn were abandoned and are still running (its body does not stop when told to); no call of it starts until some of them end`,
    )
    // The refusals went through the pipeline: the session log and the tools/result observers saw every call.
    expect(ofType(h.session.events, 'tool/result')).toHaveLength(calls.length)
    expect(h.results.filter((code) => code === 'TOOL_ERROR')).toHaveLength(40)

    h.release.resolve({ ok: true })
    await eventually(() => ofType(h.session.events, 'tool/result-late').length === MAX_ABANDONED_BODIES)
    const again = (await runBatch(h.tools, [call('stubborn', {}, 'after')], { agent: h.owner })).results[0]?.result
    expect(again?.isError).toBe(false)
    expect(started).toBe(MAX_ABANDONED_BODIES + 1)
  })

  test('drainGraceMs must be a finite number >= 0', () => {
    for (const bad of [-1, Number.NaN, Number.POSITIVE_INFINITY, '5' as unknown as number]) {
      expect(() => createNativeExecutor({ drainGraceMs: bad })).toThrow(/drainGraceMs/)
    }
    expect(() => createNativeExecutor({ drainGraceMs: 0 })).not.toThrow()
    expect(() => createNativeExecutor({ drainGraceMs: 2 ** 31 })).toThrow(
      "drainGraceMs must be at most 2147483647 ms (a timer's longest delay), not 2147483648",
    )
    expect(() => createNativeExecutor({ drainGraceMs: 2 ** 31 - 1 })).not.toThrow()
  })
})
