import { describe, expect, test } from 'vitest'
import type { JsonValue } from '@ptc/sandbox'
import { createQuickJSRuntime } from '../index.js'
import { LIMITS, runOn } from './fixtures/run-on.js'
import { EngineImage } from './image.js'
import { loadModule, type QuickJSVariantName } from './module.js'
import { WARM_UP_AFTER_IDLE_MS, warmUp } from './warm-up.js'

describe.each(['quickjs', 'quickjs-ng'] as QuickJSVariantName[])('the warm-up run (%s)', (variant) => {
  test('ends cleanly, leaves the booted memory behind, and the image runs programs after it', async () => {
    const loaded = await loadModule(variant, LIMITS.memoryBytes)
    const image = EngineImage.boot(loaded)
    const booted = new Uint8Array(loaded.memory.buffer.slice(0, 4 * 1024 * 1024))
    const outcome = await warmUp(image, LIMITS.memoryBytes)
    // It ran what it is for: both sub-calls (one answered with a value, one with a failure), a log, a value.
    expect(outcome?.error).toBeUndefined()
    expect([outcome?.broken, outcome?.subCalls, outcome?.logs, JSON.parse(outcome?.valueJson ?? 'null')?.got]).toEqual([
      false,
      2,
      ['37 true'],
      { ok: true },
    ])
    // The memory the next run starts from is the booted image (the random seed aside).
    const now = new Uint8Array(loaded.memory.buffer, 0, booted.length)
    let differing = 0
    for (let i = 0; i < booted.length; i++) if (now[i] !== booted[i]) differing++
    expect(differing).toBeLessThanOrEqual(8)
    expect(image.hasPendingJob()).toBe(false)
    // Nothing of the warm-up is visible to a run, and sub-calls work as on a fresh image.
    const after = runOn(
      image,
      'return [typeof got, typeof text, Object.keys(globalThis).length, (await tools.echo({ v: 5 })).v]',
    )
    expect(after.error).toBeUndefined()
    expect(JSON.parse(after.valueJson as string)).toEqual(['undefined', 'undefined', 0, 5])
    // JS_FreeRuntime asserts that every object was freed: a warm-up that leaked would abort here.
    expect(() => image.dispose()).not.toThrow()
  }, 30_000)
})

describe.each(['worker', 'inline'] as const)('a runtime left idle after it was created (%s)', (isolation) => {
  test('warms its engine up with no trace: runs and sessions after it start from the booted state', async () => {
    const runtime = createQuickJSRuntime({ isolation, poolSize: 1 })
    try {
      // Long enough for the engine to boot and stay idle past WARM_UP_AFTER_IDLE_MS (the warm-up then runs).
      await new Promise((resolve) => setTimeout(resolve, 1000 + WARM_UP_AFTER_IDLE_MS))
      const call = async (_name: string, args: JsonValue): Promise<JsonValue> => ({ echoed: args })
      const plain = await runtime.run({
        code: 'const r = await tools.echo({ v: [1, 2] }); return r.echoed.v.length',
        language: 'javascript',
        bindings: ['echo'],
        call,
      })
      expect(plain.value).toBe(2)
      const session = await runtime.run({
        code: 'return [Object.keys(globalThis).length, typeof got, typeof text]',
        language: 'javascript',
        bindings: [],
        call,
        session: 'fresh',
      })
      expect(session.value).toEqual([0, 'undefined', 'undefined'])
    } finally {
      await runtime.dispose()
    }
  }, 30_000)
})
