import { describe, expect, test } from 'vitest'
import type { CodeRunLimits } from '@ptc/sandbox'
import { LIMITS, runOn } from './fixtures/run-on.js'
import { EngineImage } from './image.js'
import type { SubCallRequest } from './protocol.js'
import { loadModule, type QuickJSVariantName } from './module.js'

describe.each(['quickjs', 'quickjs-ng'] as QuickJSVariantName[])('EngineImage (%s)', (variant) => {
  test('every run starts from the booted memory, and the runtime frees cleanly after many mixed runs', async () => {
    const loaded = await loadModule(variant, LIMITS.memoryBytes)
    const image = EngineImage.boot(loaded)
    const booted = new Uint8Array(loaded.memory.buffer.slice(0, 4 * 1024 * 1024))
    const programs: [string, Partial<CodeRunLimits>, string | undefined][] = [
      ['let s = 0; for (let i = 0; i < 50; i++) s += (await tools.echo({ i })).i; return s', {}, undefined],
      ['globalThis.x = []; for (;;) x.push({ s: "z".repeat(100) })', {}, 'memory'],
      ['while (true) {}', { cpuMs: 20 }, 'timeout'],
      ['tools.echo(1); Promise.resolve().then(() => { for (;;) {} }); return 1', { cpuMs: 20 }, 'timeout'],
      ['for (;;) console.log("log line")', { maxOutputBytes: 500 }, 'output-limit'],
      ['this is not javascript', {}, 'syntax'],
      ['const a = new Uint8Array(1 << 20); a.fill(7); throw new Error("after " + a[5])', {}, 'exception'],
      ['const p = tools.echo(2); return await p', {}, undefined],
    ]
    for (let round = 0; round < 5; round++) {
      for (const [body, limits, kind] of programs) {
        const outcome = runOn(image, body, { limits })
        expect(outcome.broken, body).toBe(false)
        expect(outcome.error?.kind, `${body}: ${JSON.stringify(outcome.error)}`).toBe(kind)
        // The memory the next run starts from is the booted image (the random seed aside).
        const now = new Uint8Array(loaded.memory.buffer, 0, booted.length)
        let differing = 0
        for (let i = 0; i < booted.length; i++) if (now[i] !== booted[i]) differing++
        expect(differing, body).toBeLessThanOrEqual(8)
      }
    }
    expect(runOn(image, 'return 40 + (await tools.echo(2))').valueJson).toBe('42')
    // JS_FreeRuntime asserts that every object was freed: a corrupted or leaking state aborts here.
    expect(() => image.dispose()).not.toThrow()
  }, 60_000)

  test('an argument text past maxArgumentChars does not leave the engine: the host gets its length', async () => {
    const image = EngineImage.boot(await loadModule(variant, LIMITS.memoryBytes))
    const calls: SubCallRequest[] = []
    const outcome = runOn(
      image,
      'await tools.echo({ s: "x".repeat(92) }); await tools.echo({ s: "x".repeat(93) }); return 1',
      { limits: { maxArgumentChars: 100 }, calls },
    )
    expect(outcome.error).toBeUndefined()
    // {"s":"…"} is 8 characters around the string: 100 exactly, then 101.
    expect(calls.map(([, name, args]) => [name, args])).toEqual([
      ['echo', `{"s":"${'x'.repeat(92)}"}`],
      ['echo', 101],
    ])
    image.dispose()
  })

  test('a thrown message past twice maxOutputBytes leaves the engine cut, with the count of what went', async () => {
    const image = EngineImage.boot(await loadModule(variant, LIMITS.memoryBytes))
    // 2 x 1000 + 1024 characters are kept.
    const outcome = runOn(image, 'throw new Error("x".repeat(100000))', { limits: { maxOutputBytes: 1000 } })
    const info = outcome.error !== undefined && 'info' in outcome.error ? outcome.error.info : undefined
    expect(info?.message).toBe('x'.repeat(3024))
    expect(info?.cutChars).toBe(100000 - 3024)
    expect(runOn(image, 'throw new Error("x".repeat(3024))', { limits: { maxOutputBytes: 1000 } }).error).toMatchObject(
      { info: { message: 'x'.repeat(3024) } },
    )
    image.dispose()
  })

  test('each run is reseeded: Math.random differs between runs that start from the same memory', async () => {
    const image = EngineImage.boot(await loadModule(variant, LIMITS.memoryBytes))
    const draws = new Set(Array.from({ length: 5 }, () => runOn(image, 'return Math.random()').valueJson))
    expect(draws.size).toBe(5)
    image.dispose()
  })
})
