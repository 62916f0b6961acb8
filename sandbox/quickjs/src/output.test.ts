import { afterAll, describe, expect, test } from 'vitest'
import type { CodeRunRequest, CodeRuntime } from '@ptc/sandbox'
import { createQuickJSRuntime } from './index.js'

function request(code: string, extra: Partial<CodeRunRequest> = {}): CodeRunRequest {
  return { code, bindings: ['echo'], call: async () => null, language: 'javascript', ...extra }
}

describe.each(['worker', 'inline'] as const)('the output ledger on QuickJS (%s)', (isolation) => {
  const runtime: CodeRuntime = createQuickJSRuntime({ isolation, poolSize: 1 })
  afterAll(() => runtime.dispose())

  test('300 000 empty console.log() against 1000 bytes end as output-limit with exactly the 1000 entries that fit', async () => {
    const r = await runtime.run(request('for (let i = 0; i < 300000; i++) console.log()', { limits: { maxOutputBytes: 1000 } }))
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
