import { afterAll, describe, expect, test } from 'vitest'
import type { JsonValue } from '@ptc/sandbox'
import { createQuickJSRuntime } from './index.js'

/**
 * With worker isolation the host runs on another thread than the guest: the guest hands its calls over every
 * 32 while it runs, so a burst of calls reaches the host before the guest's synchronous code is over.
 */
describe('calls made in a burst (worker isolation)', () => {
  const runtime = createQuickJSRuntime({ poolSize: 1 })
  afterAll(() => runtime.dispose())
  // Makes 64 calls, then computes for up to 20 s of its own clock before it logs: only a host that already
  // has the first calls can stop it during that loop.
  const burstThenCompute = `
    const ps = []
    for (let i = 0; i < 64; i++) ps.push(tools.echo({ i }))
    const t = Date.now()
    while (Date.now() - t < 20000) {}
    console.log('computed')
    return (await Promise.all(ps)).length`

  test('reach the host while the guest still computes: the host can act on them (here, stop the run) before it ends', async () => {
    const controller = new AbortController()
    const seen: number[] = []
    const result = await runtime.run({
      code: burstThenCompute,
      language: 'javascript',
      bindings: ['echo'],
      signal: controller.signal,
      limits: { cpuMs: 60_000, wallMs: 60_000 },
      call: async (_name, args) => {
        seen.push((args as { i: number }).i)
        controller.abort()
        return args
      },
    })
    expect(result.error?.kind).toBe('abort')
    expect(result.logs).toEqual([])
    // Handed over in submission order, the first slice first.
    expect(seen[0]).toBe(0)
  }, 60_000)

  test('a Promise.all of 1 000 calls, handed over in slices, resolves every call with its own result in order', async () => {
    const result = await runtime.run({
      code: 'const r = await Promise.all(Array.from({ length: 1000 }, (_, i) => tools.echo({ i }))); return r.every((v, i) => v.i === i) ? r.length : -1',
      language: 'javascript',
      bindings: ['echo'],
      limits: { maxPendingSubCalls: 1000, maxSubCalls: 1000 },
      call: async (_name, args): Promise<JsonValue> => args,
    })
    expect(result.error).toBeUndefined()
    expect(result.value).toBe(1000)
  })

  test('a burst past maxPendingSubCalls stops the run as limit-pending, with calls already handed over', async () => {
    const result = await runtime.run({
      code: 'await Promise.all(Array.from({ length: 200 }, (_, i) => tools.echo({ i })))',
      language: 'javascript',
      bindings: ['echo'],
      limits: { maxPendingSubCalls: 100 },
      call: () => new Promise<JsonValue>(() => undefined),
    })
    expect(result.error?.kind).toBe('limit')
    expect(result.error?.message).toBe('pending sub-call limit of 100 calls exceeded')
  })
})
