/**
 * Noisy neighbours (issue 47): runaway programs and floods must not stall other agents. Outcomes, not timings: every
 * wall here is generous; how fast the short programs answer is measured in `bench/liveness/neighbours.ts`.
 */
import { describe, expect, test } from 'vitest'
import type { CodeRunRequest, CodeRunResult, CodeRuntime, JsonValue } from '@ptc/sandbox'
import { createIsolatedVmRuntime, isolatedVmAvailability } from '@ptc/sandbox-isolated-vm'
import { createQuickJSRuntime } from '@ptc/sandbox-quickjs'

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))
const echo = async (_name: string, args: JsonValue): Promise<JsonValue> => {
  await null
  return args
}

function short(tenant: string | undefined): CodeRunRequest {
  return {
    code: 'return (await tools.echo({ v: 1 })).v',
    language: 'javascript',
    bindings: ['echo'],
    call: echo,
    limits: { wallMs: 120_000 },
    ...(tenant !== undefined && { tenant }),
  }
}

const backends: [string, () => CodeRuntime, string | undefined][] = [
  ['quickjs', () => createQuickJSRuntime(), undefined],
  [
    'isolated-vm',
    () => createIsolatedVmRuntime({ maxExtraRuns: 16 }),
    isolatedVmAvailability().available ? undefined : 'isolated-vm is not installed here',
  ],
]

describe.each(backends)('%s', (_name, create, unavailable) => {
  test.skipIf(unavailable !== undefined)(
    'every one of 90 short programs succeeds while 10 CPU burners run, and the burners run on',
    async () => {
      const rt = create()
      const burning = new AbortController()
      try {
        expect((await rt.run(short(undefined))).value).toBe(1)
        let started = 0
        let ended = 0
        const burners = Array.from({ length: 10 }, () =>
          rt
            .run({
              code: 'await tools.go({})\nwhile (true) {}',
              language: 'javascript',
              bindings: ['go'],
              call: async () => (started++, null),
              limits: { cpuMs: 150_000, wallMs: 150_000 },
              signal: burning.signal,
              tenant: 'burners',
            })
            .then((r) => (ended++, r)),
        )
        // All ten burn before the short programs come, beside the pool's engines (booting a worker each from source
        // takes seconds on a loaded machine; with long runs keeping their places, only the pool's size ever start).
        for (const t0 = performance.now(); started < 10 && performance.now() - t0 < 120_000; ) await sleep(20)
        expect(started, 'the ten burners run at once').toBe(10)
        const shorts: CodeRunResult[] = await Promise.all(
          Array.from({ length: 90 }, (_, i) => rt.run(short(`agent-${i % 9}`))),
        )
        const lost = shorts.filter((r) => r.value !== 1).map((r) => r.error)
        expect(lost, `the short runs that failed: ${JSON.stringify(lost)}`).toHaveLength(0)
        expect(ended, 'no burner ended before the short programs had all answered').toBe(0)
        burning.abort()
        for (const r of await Promise.all(burners)) expect(r.error?.kind).toBe('abort')
      } finally {
        burning.abort()
        await rt.dispose()
      }
    },
    240_000,
  )

  test.skipIf(unavailable !== undefined)(
    "another tenant's program completes before a flooding tenant's queue drains",
    async () => {
      const rt = create()
      try {
        expect((await rt.run(short(undefined))).value).toBe(1)
        const answered: string[] = []
        const flood = Array.from({ length: 200 }, () =>
          rt.run(short('flooder')).then((r) => (answered.push('flood'), r)),
        )
        const other = await rt.run(short('other'))
        answered.push('other')
        const flooded = await Promise.all(flood)
        expect(other.value).toBe(1)
        const lost = flooded.filter((r) => r.value !== 1).map((r) => r.error)
        expect(lost, `the flood's runs that failed: ${JSON.stringify(lost)}`).toHaveLength(0)
        // Queued behind the whole flood, it would answer last; served in turn, it answers while most of it still waits.
        expect(answered.length - answered.indexOf('other') - 1).toBeGreaterThan(100)
      } finally {
        await rt.dispose()
      }
    },
    120_000,
  )
})
