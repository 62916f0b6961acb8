import { describe, expect, test } from 'vitest'
import { DEFAULT_LIMITS } from '@ptc/sandbox'
import { EngineImage } from './image.js'
import { ModuleCache } from './module-cache.js'

const MiB = 1024 * 1024

/** The image `acquire` gave, and whether it was loaded for it (a promise) or taken idle. */
async function take(cache: ModuleCache, guestBytes: number): Promise<{ image: EngineImage; loaded: boolean }> {
  const acquired = cache.acquire(guestBytes)
  return { image: await acquired, loaded: acquired instanceof Promise }
}

describe('ModuleCache', () => {
  test('runs limited otherwise than the image warmed at start reuse one image: the one idle the longest gives way', async () => {
    const cache = new ModuleCache('quickjs', 1)
    const warmed = await take(cache, DEFAULT_LIMITS.memoryBytes)
    expect(warmed.loaded).toBe(true)
    expect(cache.release(warmed.image, false)).toBe(false) // nothing dropped
    // A harness's own memory limit: a module of that cap is loaded once…
    const first = await take(cache, 64 * MiB)
    expect(first.loaded).toBe(true)
    expect(cache.release(first.image, false)).toBe(true) // the warmed image gave way
    expect(cache.keeps(first.image)).toBe(true)
    expect(cache.keeps(warmed.image)).toBe(false)
    // …and every later run with that limit takes it idle.
    for (let i = 0; i < 3; i++) {
      const next = await take(cache, 64 * MiB)
      expect(next).toEqual({ image: first.image, loaded: false })
      expect(cache.release(next.image, false)).toBe(false)
    }
    // The default limit now loads again (the cap bounds the guest: an image of another cap is never lent).
    expect((await take(cache, DEFAULT_LIMITS.memoryBytes)).loaded).toBe(true)
    cache.clear()
  })

  test('a broken image is dropped, never kept; the idle ones stay', async () => {
    const cache = new ModuleCache('quickjs', 2)
    // Two runs at once (inline isolation): two images.
    const kept = await take(cache, 32 * MiB)
    const broken = await take(cache, 32 * MiB)
    expect([kept.loaded, broken.loaded]).toEqual([true, true])
    expect(cache.release(kept.image, false)).toBe(false)
    expect(cache.release(broken.image, true)).toBe(true)
    expect(cache.keeps(broken.image)).toBe(false)
    expect(cache.keeps(kept.image)).toBe(true)
    expect(await take(cache, 32 * MiB)).toEqual({ image: kept.image, loaded: false })
    cache.clear()
  })
})
