/**
 * The scheduler's bounded drain at the seam, over the fake runtime (real
 * backends: test/ptc/settlement.test.ts). These pin down ordering and
 * bookkeeping; they prove nothing about a backend.
 */
import { defineTool, type SessionEvent, type ToolExecutionResult } from '@ptc/tools'
import { describe, expect, test } from 'vitest'
import { createPtcExecutor } from './executor.js'
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
      output: { schema: { type: 'object', additionalProperties: false, properties: { ok: { type: 'boolean' } } }, render: () => [{ type: 'text', text: 'ok' }] },
      isConcurrencySafe: () => true,
      execute: () => new Promise<{ ok: boolean }>((resolve) => waiting.push(() => resolve({ ok: true }))),
    }),
  )
  return Object.assign(h, { release: () => waiting.splice(0).forEach((release) => release()) })
}

const settles = (h: PtcHarness): SessionEvent[] => h.session.events.filter((e) => e.type === 'tool/ptc-dispatch')
const codeOf = (e: SessionEvent | undefined): unknown => (e?.error as { info?: { code?: string } } | undefined)?.info?.code

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

  test('drainGraceMs must be a finite number >= 0', () => {
    for (const bad of [-1, Number.NaN, Number.POSITIVE_INFINITY, '5' as unknown as number]) {
      expect(() => createPtcExecutor({ runtime: new FakeRuntime(), drainGraceMs: bad })).toThrow(/drainGraceMs/)
    }
  })
})
