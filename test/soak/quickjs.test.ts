/**
 * QuickJS soaks, short form by default (`PTC_SOAK_SCALE`, see run-code.soak.ts; the full form is
 * `test/soak/long.ts`): the run_code soak of issue 10, then the bare runtime under the same counts.
 */
import { afterAll, beforeAll, expect, test } from 'vitest'
import { createQuickJSRuntime } from '@ptc/sandbox-quickjs'
import type { CodeRunRequest, CodeRunResult, CodeRuntime, JsonValue } from '@ptc/sandbox'
import { expectSoakHealthy } from './assert.js'
import { runSoak, soakCounts } from './run-code.soak.js'

const counts = soakCounts()

/** A mix of programs: mostly successful runs with sub-calls, some failures of every cheap kind. */
function programFor(i: number): { code: string; limits?: CodeRunRequest['limits']; expected: string } {
  switch (i % 10) {
    case 3:
      return { code: 'throw new Error("boom " + 3)', expected: 'exception' }
    case 5:
      return { code: 'return () => 1', expected: 'invalid-output' }
    case 7:
      return { code: 'while (true) {}', limits: { cpuMs: 15 }, expected: 'timeout' }
    case 9:
      return {
        code: 'while (true) console.log("xxxxxxxxxx")',
        limits: { maxOutputBytes: 2000 },
        expected: 'output-limit',
      }
    default:
      return {
        code: `const r = await Promise.all([tools.echo({ i: ${i} }), tools.echo({ j: 1 })])\nconsole.log("run", ${i})\nreturn { i: r[0].args.i }`,
        expected: 'ok',
      }
  }
}

const call = async (name: string, args: JsonValue): Promise<JsonValue> => ({ name, args })

function check(i: number, r: CodeRunResult): void {
  const { expected } = programFor(i)
  if (expected === 'ok') expect(r.value, `run ${i}`).toEqual({ i })
  else expect(r.error?.kind, `run ${i}`).toBe(expected)
}

function mb(n: number): string {
  return `${(n / 1024 / 1024).toFixed(1)} MiB`
}

let runtime: CodeRuntime
beforeAll(() => {
  runtime = createQuickJSRuntime({ isolation: 'worker' })
})
afterAll(async () => {
  await runtime.dispose()
})

async function runOne(i: number): Promise<CodeRunResult> {
  const p = programFor(i)
  const r = await runtime.run({ code: p.code, bindings: ['echo'], call, ...(p.limits ? { limits: p.limits } : {}) })
  check(i, r)
  return r
}

test(`run_code soak: ${counts.sequential} sequential + ${counts.concurrent} concurrent calls, 10% hostile, through a JsonlSession`, async () => {
  expectSoakHealthy(await runSoak(runtime, { counts }))
  expect((await runtime.run({ code: 'return 1', bindings: [], call })).value).toBe(1)
}, 150_000)

test(`${counts.sequential} sequential runs with failures mixed in leave memory flat and the pool healthy`, async () => {
  for (let i = 0; i < 100; i++) await runOne(i) // warm-up: workers, modules, JIT
  const before = process.memoryUsage()
  const t0 = performance.now()
  for (let i = 0; i < counts.sequential; i++) await runOne(i)
  const elapsed = performance.now() - t0
  const after = process.memoryUsage()
  console.log(
    `[soak sequential] ${counts.sequential} runs in ${elapsed.toFixed(0)} ms; rss ${mb(before.rss)} -> ${mb(after.rss)}, heapUsed ${mb(before.heapUsed)} -> ${mb(after.heapUsed)}`,
  )
  expect(after.rss - before.rss).toBeLessThan(150 * 1024 * 1024)
  expect(after.heapUsed - before.heapUsed).toBeLessThan(64 * 1024 * 1024)
  expect((await runtime.run({ code: 'return 1', bindings: [], call })).value).toBe(1)
}, 120_000)

test(`3 x ${counts.concurrent} concurrent runs with failures mixed in leave memory flat and the pool healthy`, async () => {
  const before = process.memoryUsage()
  const t0 = performance.now()
  for (let round = 0; round < 3; round++) {
    await Promise.all(Array.from({ length: counts.concurrent }, (_, i) => runOne(i)))
  }
  const elapsed = performance.now() - t0
  const after = process.memoryUsage()
  console.log(
    `[soak concurrent] 3 x ${counts.concurrent} concurrent runs in ${elapsed.toFixed(0)} ms; rss ${mb(before.rss)} -> ${mb(after.rss)}, heapUsed ${mb(before.heapUsed)} -> ${mb(after.heapUsed)}`,
  )
  expect(after.rss - before.rss).toBeLessThan(150 * 1024 * 1024)
  expect((await runtime.run({ code: 'return 2', bindings: [], call })).value).toBe(2)
}, 120_000)
