import { afterAll, describe, expect, test } from 'vitest'
import type { CodeRuntime } from '@ptc/sandbox'
import { ENGINE_OVERHEAD_BYTES } from './engine/module.js'
import { createQuickJSRuntime } from './index.js'

const MiB = 1024 * 1024
/** Holds 1 MB strings until the memory runs out; returns how many it held. */
const HOARD = 'const a = []; try { for (;;) a.push("x".repeat(999999) + a.length) } catch (e) {} const n = a.length; a.length = 0; return n'

describe.each(['inline', 'worker'] as const)('memoryBytes on QuickJS (%s)', (isolation) => {
  const runtime: CodeRuntime = createQuickJSRuntime({ isolation, poolSize: 1 })
  afterAll(() => runtime.dispose())
  const hoard = async (memoryBytes: number): Promise<number> => {
    const r = await runtime.run({ code: HOARD, bindings: [], call: async () => null, language: 'javascript', limits: { memoryBytes } })
    expect(r.error).toBeUndefined()
    return r.value as number
  }

  test('a guest holds about its limit, no more, even on an engine a run with a larger limit used before', async () => {
    const big = await hoard(128 * MiB)
    expect(big * 1e6).toBeGreaterThan(100 * MiB)
    // A quiet run with the larger limit leaves its engine idle and small enough to be kept.
    const quiet = await runtime.run({ code: 'return 1', bindings: [], call: async () => null, limits: { memoryBytes: 128 * MiB } })
    expect(quiet.value).toBe(1)
    const small = await hoard(32 * MiB)
    // The cap is the limit plus the engine's own room (its data and stack take about 5.4 MiB of it).
    expect(small * 1e6).toBeGreaterThan(24 * MiB)
    expect(small * 1e6).toBeLessThanOrEqual(32 * MiB + ENGINE_OVERHEAD_BYTES)
    expect(await hoard(128 * MiB)).toBeGreaterThan(small)
  }, 60_000)
})
