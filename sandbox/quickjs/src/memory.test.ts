import { afterAll, describe, expect, test } from 'vitest'
import type { CodeRuntime } from '@ptc/sandbox'
import { ENGINE_OVERHEAD_BYTES, MAX_GUEST_BYTES } from './engine/module.js'
import { createQuickJSRuntime } from './index.js'

const MiB = 1024 * 1024
/** Holds 1 MB strings until the memory runs out; returns how many it held. */
const HOARD =
  'const a = []; try { for (;;) a.push("x".repeat(999999) + a.length) } catch (e) {} const n = a.length; a.length = 0; return n'

describe.each(['inline', 'worker'] as const)('memoryBytes on QuickJS (%s)', (isolation) => {
  const runtime: CodeRuntime = createQuickJSRuntime({ isolation, poolSize: 1 })
  afterAll(() => runtime.dispose())
  const hoard = async (memoryBytes: number): Promise<number> => {
    const r = await runtime.run({
      code: HOARD,
      bindings: [],
      call: async () => null,
      language: 'javascript',
      limits: { memoryBytes },
    })
    expect(r.error).toBeUndefined()
    return r.value as number
  }

  test('a guest holds about its limit, no more, even on an engine a run with a larger limit used before', async () => {
    const big = await hoard(128 * MiB)
    expect(big * 1e6).toBeGreaterThan(100 * MiB)
    // A quiet run with the larger limit leaves its engine idle and small enough to be kept.
    const quiet = await runtime.run({
      code: 'return 1',
      bindings: [],
      call: async () => null,
      limits: { memoryBytes: 128 * MiB },
    })
    expect(quiet.value).toBe(1)
    const small = await hoard(32 * MiB)
    // The cap is the limit plus the engine's own room (its data and stack take about 5.4 MiB of it).
    expect(small * 1e6).toBeGreaterThan(24 * MiB)
    expect(small * 1e6).toBeLessThanOrEqual(32 * MiB + ENGINE_OVERHEAD_BYTES)
    expect(await hoard(128 * MiB)).toBeGreaterThan(small)
  }, 60_000)

  test('a memoryBytes past what WebAssembly can give is refused as misuse, not a crash of every run; the most it can give runs', async () => {
    const over = MAX_GUEST_BYTES + 64 * 1024
    const refused: unknown = await runtime
      .run({ code: 'return 1', bindings: [], call: async () => null, limits: { memoryBytes: over } })
      .catch((thrown: unknown) => thrown)
    expect(refused).toMatchObject({
      name: 'SandboxUsageError',
      message: `limit "memoryBytes" must be at most ${MAX_GUEST_BYTES} (2016 MiB): a QuickJS engine's memory is WebAssembly memory, at most 2 GiB, of which 32 MiB is the engine's own; not ${over}`,
    })
    expect(() => createQuickJSRuntime({ isolation, limits: { memoryBytes: 4 * 1024 * MiB } })).toThrow(
      /must be at most/,
    )
    const most = await runtime.run({
      code: 'return 1',
      bindings: [],
      call: async () => null,
      limits: { memoryBytes: MAX_GUEST_BYTES },
    })
    expect(most.value).toBe(1)
  })
})
