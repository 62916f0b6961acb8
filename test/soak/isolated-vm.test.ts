import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import type { CodeRunRequest, CodeRunResult, CodeRuntime, JsonValue } from '@ptc/sandbox'
import { createIsolatedVmRuntime, isolatedVmAvailability } from '@ptc/sandbox-isolated-vm'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { expectSoakHealthy } from './assert.js'
import { runSoak, soakCounts } from './run-code.soak.js'

/**
 * isolated-vm soaks, short form by default (`PTC_SOAK_SCALE`, see run-code.soak.ts; the full form is
 * `test/soak/long.ts isolated-vm`): the run_code soak of issue 10, then the bare runtime under the same counts.
 */
const availability = isolatedVmAvailability()
const counts = soakCounts()

setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void

async function settle(): Promise<{ rss: number; heap: number }> {
  for (let i = 0; i < 3; i++) {
    gc()
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  const m = process.memoryUsage()
  return { rss: m.rss, heap: m.heapUsed }
}

const MB = 1024 * 1024
const echo = async (name: string, args: JsonValue): Promise<JsonValue> => ({ name, args })

/** One program of a mix: most succeed with sub-calls, one in eight fails in a different way. */
function program(i: number): { request: Partial<CodeRunRequest>; expect: (r: CodeRunResult) => void } {
  switch (i % 8) {
    case 1:
      return { request: { code: 'throw new Error("boom")' }, expect: (r) => expect(r.error?.kind).toBe('exception') }
    case 3:
      return { request: { code: 'const x = ;' }, expect: (r) => expect(r.error?.kind).toBe('syntax') }
    case 5:
      return {
        request: { code: 'while (true) console.log("flood")', limits: { maxOutputBytes: 200 } },
        expect: (r) => expect(r.error?.kind).toBe('output-limit'),
      }
    case 7:
      return i % 64 === 7
        ? {
            request: { code: 'let i = 0\nwhile (true) i++', limits: { cpuMs: 20 } },
            expect: (r) => expect(r.error?.kind).toBe('timeout'),
          }
        : {
            request: { code: 'for (let i = 0; i < 5; i++) await tools.echo({ i })', limits: { maxSubCalls: 3 } },
            expect: (r) => expect(r.error?.kind).toBe('limit'),
          }
    default:
      return {
        request: {
          code: `const rs = await Promise.all([1, 2, 3].map((k) => tools.echo({ k, s: "x".repeat(${i % 100}) })))
          console.log("run", ${i})
          return rs.map((r) => r.args.k)`,
        },
        expect: (r) => {
          expect(r.error).toBeUndefined()
          expect(r.value).toEqual([1, 2, 3])
        },
      }
  }
}

describe.skipIf(!availability.available)(
  `isolated-vm soak${availability.available ? '' : ` (skipped: ${availability.reason})`}`,
  () => {
    let rt: CodeRuntime
    const run = (i: number) => {
      const p = program(i)
      return rt.run({ code: '', bindings: ['echo'], call: echo, ...p.request }).then((r) => (p.expect(r), r))
    }
    beforeAll(() => {
      rt = createIsolatedVmRuntime()
    })
    afterAll(() => rt.dispose())

    test(`run_code soak: ${counts.sequential} sequential + ${counts.concurrent} concurrent calls, 10% hostile, through a JsonlSession`, async () => {
      expectSoakHealthy(await runSoak(rt, { counts }))
      expect((await rt.run({ code: 'return 1', bindings: [], call: echo })).value).toBe(1)
    }, 150_000)

    test(`${counts.sequential} sequential and ${counts.concurrent} concurrent runs with failures mixed in leave memory flat`, async () => {
      // Warm-up: JIT, lazy modules, and one concurrent burst (isolated-vm starts extra threads when its
      // pool is busy; their malloc arenas stay with the process, a one-time plateau, not a leak).
      for (let i = 0; i < 100; i++) await run(i)
      await Promise.all(Array.from({ length: counts.concurrent }, (_, i) => run(i)))
      const before = await settle()
      const t0 = performance.now()
      for (let i = 0; i < counts.sequential; i++) await run(i)
      const sequentialMs = performance.now() - t0
      const afterSequential = await settle()
      const t1 = performance.now()
      await Promise.all(Array.from({ length: counts.concurrent }, (_, i) => run(i)))
      const concurrentMs = performance.now() - t1
      const after = await settle()
      const fmt = (m: { rss: number; heap: number }) =>
        `rss ${(m.rss / MB).toFixed(1)} MB, heap ${(m.heap / MB).toFixed(1)} MB`
      console.log(
        `[soak isolated-vm] ${counts.sequential} sequential in ${sequentialMs.toFixed(0)} ms, ${counts.concurrent} concurrent in ${concurrentMs.toFixed(0)} ms\n` +
          `  before:            ${fmt(before)}\n  after sequential:  ${fmt(afterSequential)}\n  after concurrent:  ${fmt(after)}`,
      )
      expect(afterSequential.heap - before.heap).toBeLessThan(16 * MB)
      expect(afterSequential.rss - before.rss).toBeLessThan(64 * MB)
      expect(after.heap - before.heap).toBeLessThan(16 * MB)
      expect(after.rss - before.rss).toBeLessThan(64 * MB)
    }, 120_000)
  },
)
