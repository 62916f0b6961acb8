import { describe, expect, test } from 'vitest'
import { createIsolatedVmRuntime, isolatedVmAvailability } from './index.js'

const availability = isolatedVmAvailability()

for (const containment of ['process', 'none'] as const) {
  describe.skipIf(!availability.available)(`isolated-vm output ledger (containment: ${containment})`, () => {
    const run = async (code: string, maxOutputBytes: number) => {
      const rt = createIsolatedVmRuntime({ containment })
      try {
        return await rt.run({ code, bindings: [], call: async () => null, limits: { maxOutputBytes } })
      } finally {
        await rt.dispose()
      }
    }

    test('300 000 empty logs against 1000 bytes: output-limit with exactly 1000 entries kept', async () => {
      const r = await run('for (let i = 0; i < 300000; i++) console.log()\nreturn 1', 1000)
      expect(r.error?.kind).toBe('output-limit')
      expect(r.logs).toHaveLength(1000)
      expect(r.logs.every((l) => l === '')).toBe(true)
    }, 30_000)

    test('no entry is dropped without output-limit: a flood of mixed entries keeps an exact prefix', async () => {
      const r = await run('for (let i = 0; ; i++) console.log(i % 3 === 0 ? "" : "é".repeat(i % 7))', 5000)
      expect(r.error?.kind).toBe('output-limit')
      const expected: string[] = []
      let used = 0
      for (let i = 0; ; i++) {
        const text = i % 3 === 0 ? '' : 'é'.repeat(i % 7)
        const cost = Buffer.byteLength(text) + 1
        if (used + cost > 5000) break
        used += cost
        expected.push(text)
      }
      expect(r.logs).toEqual(expected)
    }, 30_000)

    test('a lone surrogate is charged as U+FFFD: 3 bytes plus the separator', async () => {
      const fits = await run('console.log("\\ud800")', 4)
      expect(fits.error).toBeUndefined()
      expect(fits.logs).toEqual(['\ufffd'])
      const over = await run('console.log("\\ud800")', 3)
      expect(over.error?.kind).toBe('output-limit')
      expect(over.logs).toEqual([])
    }, 30_000)
  })
}
