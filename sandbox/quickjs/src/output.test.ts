import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import type { CodeRunRequest, CodeRuntime } from '@ptc/sandbox'
import { createQuickJSRuntime } from './index.js'

function request(code: string, extra: Partial<CodeRunRequest> = {}): CodeRunRequest {
  return { code, bindings: ['echo'], call: async () => null, language: 'javascript', ...extra }
}

describe.each(['worker', 'inline'] as const)('the output ledger on QuickJS (%s)', (isolation) => {
  const runtime: CodeRuntime = createQuickJSRuntime({ isolation, poolSize: 1 })
  afterAll(() => runtime.dispose())

  test('300 000 empty console.log() against 1000 bytes end as output-limit with exactly the 1000 entries that fit', async () => {
    const r = await runtime.run(
      request('for (let i = 0; i < 300000; i++) console.log()', { limits: { maxOutputBytes: 1000 } }),
    )
    expect(r.error?.kind).toBe('output-limit')
    expect(r.logs).toHaveLength(1000)
    expect(r.logs.every((l) => l === '')).toBe(true)
  })

  test('a lone surrogate is charged 3 bytes plus the separator and arrives as one U+FFFD', async () => {
    const fits = await runtime.run(request('console.log("\\uD800"); return 1', { limits: { maxOutputBytes: 5 } }))
    // 4 bytes for the entry, 1 for the value `1`.
    expect(fits.error).toBeUndefined()
    expect(fits.logs).toEqual(['\uFFFD'])
    const over = await runtime.run(request('console.log("\\uDC00"); return 1', { limits: { maxOutputBytes: 4 } }))
    expect(over.error?.kind).toBe('output-limit')
    expect(over.logs).toEqual(['\uFFFD'])
    const tooSmall = await runtime.run(request('console.log("a\\uD800b")', { limits: { maxOutputBytes: 5 } }))
    expect(tooSmall.error?.kind).toBe('output-limit')
    expect(tooSmall.logs).toEqual([])
  })

  test('logs between sub-calls reach the result in order, the prefix that fits, nothing dropped before the limit', async () => {
    const code = 'for (let i = 0; i < 300; i++) { console.log(String(i)); if (i % 7 === 0) await tools.echo({}) }'
    const r = await runtime.run(request(code, { limits: { maxOutputBytes: 1000 } }))
    expect(r.error?.kind).toBe('output-limit')
    const used = r.logs.reduce((n, l) => n + Buffer.byteLength(l) + 1, 0)
    expect(r.logs).toEqual(Array.from({ length: r.logs.length }, (_, i) => String(i)))
    expect(used).toBeLessThanOrEqual(1000)
    // The next entry did not fit.
    expect(used + String(r.logs.length).length + 1).toBeGreaterThan(1000)
    const all = await runtime.run(request(code.replace('300', '50')))
    expect(all.error).toBeUndefined()
    expect(all.logs).toEqual(Array.from({ length: 50 }, (_, i) => String(i)))
  })
})

describe('logs of a worker the watchdog terminates', () => {
  const runtime: CodeRuntime = createQuickJSRuntime({ poolSize: 1 })
  afterAll(() => runtime.dispose())
  const HOSTILE = 'const a = new Array(2e6).fill(123456789); for (;;) a.join()'
  // The wall counts from the call: boot the worker first, so the programs below get their whole wall.
  beforeAll(async () => void (await runtime.run(request('return 0'))), 30_000)

  test('entries the worker accepted but had not flushed are in the result, in order, after the flushed ones', async () => {
    const code = `console.log("flushed with the call"); await tools.echo({}); console.log("only in the worker"); console.log("\\uD800 é"); ${HOSTILE}`
    const r = await runtime.run(request(code, { limits: { wallMs: 1000, cpuMs: 60_000 } }))
    expect(r.error?.kind).toBe('timeout')
    expect(r.error?.message).toMatch(/terminated/)
    expect(r.logs).toEqual(['flushed with the call', 'only in the worker', '\uFFFD é'])
    // The next run's logs start empty (each worker has its own journal, cleared per run).
    const next = await runtime.run(request('console.log("next"); return 1'))
    expect(next.logs).toEqual(['next'])
  }, 30_000)

  test('a terminated run keeps exactly the entries its output budget accepted', async () => {
    const code = `for (let i = 0; i < 5000; i++) console.log(""); ${HOSTILE}`
    // 3000 fit; the next one ends the run as output-limit before the hostile part starts (the wall is only a
    // backstop: 5 000 logs took more than 1 s on a loaded machine).
    const r = await runtime.run(request(code, { limits: { wallMs: 10_000, cpuMs: 60_000, maxOutputBytes: 3000 } }))
    expect(r.error?.kind).toBe('output-limit')
    expect(r.logs).toHaveLength(3000)
    const under = await runtime.run(
      request(`for (let i = 0; i < 2000; i++) console.log(String(i % 10)); ${HOSTILE}`, {
        limits: { wallMs: 3000, cpuMs: 60_000, maxOutputBytes: 5000 },
      }),
    )
    expect(under.error?.kind).toBe('timeout')
    expect(under.logs).toEqual(Array.from({ length: 2000 }, (_, i) => String(i % 10)))
  }, 30_000)
})
