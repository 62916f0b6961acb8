import { Buffer } from 'node:buffer'
import { describe, expect, test } from 'vitest'
import { LIMITS, runOn } from './fixtures/run-on.js'
import { EngineImage } from './image.js'
import { offerSpare, type SessionMemory } from './session-memory.js'
import { loadModule, type QuickJSVariantName } from './module.js'
import type { EngineRunInput, EngineRunOutcome } from './protocol.js'

/** A session run of `body` on `image` (see `runOn`). */
const runIn = (image: EngineImage, body: string, session?: EngineRunInput['session']): EngineRunOutcome =>
  runOn(image, body, session === undefined ? {} : { session })

/** The memory a session run left (failing the test when there is none). */
function memoryOf(outcome: EngineRunOutcome): SessionMemory {
  expect(outcome.error, JSON.stringify(outcome.error)).toBeUndefined()
  expect(outcome.session).toBeDefined()
  return outcome.session as SessionMemory
}

const has = (memory: SessionMemory, marker: string): boolean =>
  Buffer.from(memory.data.buffer, memory.data.byteOffset, memory.data.byteLength).includes(marker)

describe.each(['quickjs', 'quickjs-ng'] as QuickJSVariantName[])('session memory on an EngineImage (%s)', (variant) => {
  const boot = async (): Promise<EngineImage> => {
    const image = EngineImage.boot(await loadModule(variant, LIMITS.memoryBytes))
    await image.prepareSessions()
    return image
  }

  test('a new session captures none of the bytes an earlier session or plain run left on the image', async () => {
    const image = await boot()
    const a = memoryOf(runIn(image, 'globalThis.secret = "SECRET-A-" + "x".repeat(200000) + "-END"; return 1', {}))
    // The search can find a marker: A's own capture holds it.
    expect(has(a, 'SECRET-A-')).toBe(true)
    expect(image.resident).toBe(a.id)
    // B right after A, on the image that still holds A's memory.
    const b1 = memoryOf(runIn(image, 'globalThis.b = 1; return typeof secret', {}))
    expect(has(b1, 'SECRET-A-')).toBe(false)
    expect(runIn(image, 'globalThis.plain = "PLAIN-MARK-" + "y".repeat(200000); return plain.length').valueJson).toBe(
      '200011',
    )
    const b2 = runIn(image, 'globalThis.b = 2; return [typeof secret, typeof plain]', {})
    expect(b2.valueJson).toBe('["undefined","undefined"]')
    const b = memoryOf(b2)
    expect(has(b, 'SECRET-A-')).toBe(false)
    expect(has(b, 'PLAIN-MARK-')).toBe(false)
    expect(has(b, 'xxxxxxxxxxxxxxxx')).toBe(false)
    expect(has(b, 'yyyyyyyyyyyyyyyy')).toBe(false)
    image.dispose()
  })

  test(
    "a session's memory is restored on the image after other runs reset it, " + 'and the program sees its state',
    async () => {
      const image = await boot()
      const first = memoryOf(runIn(image, 'globalThis.kept = { a: [1, 2], m: new Map([["k", "v"]]) }', {}))
      expect(runIn(image, 'return typeof kept').valueJson).toBe('"undefined"')
      expect(image.resident).toBeUndefined()
      const again = runIn(image, 'return [kept.a[1], kept.m.get("k")]', { id: first.id, memory: first })
      expect(again.valueJson).toBe('[2,"v"]')
      // The state stays the session's: the next run continues from this one's memory, resident in place.
      const next = memoryOf(again)
      expect(image.resident).toBe(next.id)
      expect(runIn(image, 'kept.a.push(3); return kept.a.length', { id: next.id }).valueJson).toBe('3')
      image.dispose()
    },
  )

  test(
    'a session memory captured on one image restores on ' + 'another freshly booted image (equal fingerprints)',
    async () => {
      const one = await boot()
      const two = await boot()
      const memory = memoryOf(runIn(one, 'globalThis.kept = "from one"', {}))
      expect(two.fingerprint).toBe(one.fingerprint)
      expect(runIn(two, 'return kept', { id: memory.id, memory }).valueJson).toBe('"from one"')
      one.dispose()
      two.dispose()
    },
  )

  test(
    'a memory larger than a fresh image restores on it: ' + 'the image grows to the size from wherever its heap ends',
    async () => {
      const one = await boot()
      // About 24 MiB of string data: the memory grows past a fresh image's 16 MiB.
      const memory = memoryOf(runIn(one, 'globalThis.big = "x".repeat(24 * 1024 * 1024); return big.length', {}))
      expect(memory.byteLength).toBeGreaterThan(24 * 1024 * 1024)
      const two = await boot()
      expect(two.loaded.memory.buffer.byteLength).toBeLessThan(memory.byteLength)
      expect(runIn(two, 'return [big.length, big.slice(-3)]', { id: memory.id, memory }).valueJson).toBe(
        `[${24 * 1024 * 1024},"xxx"]`,
      )
      one.dispose()
      two.dispose()
    },
  )

  test(
    "a session run that changed more than the session's budget captures nothing, " +
      'says how much, and leaves the booted image',
    async () => {
      const image = await boot()
      const over = runIn(image, 'globalThis.big = "y".repeat(2 * 1024 * 1024); return big.length', {
        maxBytes: 1024 * 1024,
      })
      expect(over.valueJson).toBe(String(2 * 1024 * 1024))
      expect(over.session).toBeUndefined()
      expect(over.sessionOver).toBeGreaterThan(2 * 1024 * 1024)
      expect(image.resident).toBeUndefined()
      expect(runIn(image, 'return typeof big').valueJson).toBe('"undefined"')
      image.dispose()
    },
  )

  test(
    'an image that keeps captures (inline): a capture evicted by another run gets its own copy first, ' +
      'and one its next capture superseded is refused, never read',
    async () => {
      const image = await boot()
      const other = await boot()
      image.keepsCaptures = true
      const a1 = memoryOf(runIn(image, 'globalThis.kept = "A-" + "a".repeat(1000); return 1', {}))
      // The session's next run starts on its resident memory: its capture reuses the buffer a1 viewed.
      const a2 = memoryOf(runIn(image, 'kept += "!"; return kept.length', { id: a1.id }))
      expect(a1.data.byteLength).toBe(0)
      const stale = runIn(other, 'return kept', { id: a1.id, memory: a1 })
      expect(stale.error && 'message' in stale.error ? stale.error.message : '').toMatch(/incomplete/)
      expect(stale.session).toBeUndefined()
      // Another session's run on the image: a2 is given a copy before the buffer takes B's bytes.
      const before = Buffer.from(a2.data)
      const b = memoryOf(runIn(image, 'globalThis.b = "B-" + "b".repeat(5000); return 1', {}))
      expect(has(b, 'bbbbbbbbbbbbbbbb')).toBe(true)
      expect(Buffer.from(a2.data).equals(before)).toBe(true)
      expect(has(a2, 'bbbbbbbbbbbbbbbb')).toBe(false)
      expect(runIn(other, 'return [kept.length, typeof b]', { id: a2.id, memory: a2 }).valueJson).toBe(
        '[1003,"undefined"]',
      )
      // B's capture, resident on the image, restores elsewhere too.
      expect(runIn(other, 'return [b.length, typeof kept]', { id: b.id, memory: b }).valueJson).toBe(
        '[5002,"undefined"]',
      )
      image.dispose()
      other.dispose()
    },
  )

  test(
    'a worker-side capture is written into a spare buffer ' + 'the host gave back when its size fits, and only then',
    async () => {
      const image = await boot()
      const other = await boot()
      const first = memoryOf(runIn(image, 'globalThis.kept = "S-" + "s".repeat(3000); return 1', {}))
      const size = first.data.byteLength
      // Too small, and far too large (it would travel with the capture, unused): neither is taken.
      const small = new ArrayBuffer(size - 4096)
      const large = new ArrayBuffer(size + 256 * 1024)
      offerSpare(small)
      offerSpare(large)
      const second = memoryOf(runIn(image, 'kept += "!"; return 1', { id: first.id }))
      expect(second.data.buffer).not.toBe(small)
      expect(second.data.buffer).not.toBe(large)
      // One a little larger is taken: the capture views its start.
      const fits = new ArrayBuffer(second.data.byteLength + 8192)
      new Uint8Array(fits).fill(0xee)
      offerSpare(fits)
      const third = memoryOf(runIn(image, 'kept += "?"; return 1', { id: second.id }))
      expect(third.data.buffer).toBe(fits)
      expect(third.data.byteOffset).toBe(0)
      expect(runIn(other, 'return [kept.length, kept.slice(-2)]', { id: third.id, memory: third }).valueJson).toBe(
        '[3004,"!?"]',
      )
      image.dispose()
      other.dispose()
    },
  )

  test(
    'an image that keeps captures: ' +
      'a run over the budget leaves the capture it started on intact (the session keeps it)',
    async () => {
      const image = await boot()
      image.keepsCaptures = true
      const kept = memoryOf(runIn(image, 'globalThis.kept = "K"; return 1', { maxBytes: 1024 * 1024 }))
      const before = Buffer.from(kept.data)
      const over = runIn(image, 'globalThis.big = "y".repeat(2 * 1024 * 1024); return big.length', {
        id: kept.id,
        maxBytes: 1024 * 1024,
      })
      expect(over.sessionOver).toBeGreaterThan(1024 * 1024)
      expect(Buffer.from(kept.data).equals(before)).toBe(true)
      expect(runIn(image, 'return [kept, typeof big]', { id: kept.id, memory: kept }).valueJson).toBe(
        '["K","undefined"]',
      )
      image.dispose()
    },
  )

  test(
    'a memory whose fingerprint is altered is refused as crash naming the engine build; ' +
      "one larger than the module's cap as memory",
    async () => {
      const image = await boot()
      const memory = memoryOf(runIn(image, 'globalThis.kept = 1', {}))
      runIn(image, 'return 0')
      const foreign = runIn(image, 'return kept', { id: memory.id, memory: { ...memory, fingerprint: '0'.repeat(32) } })
      expect(foreign.error?.kind).toBe('crash')
      expect(foreign.error && 'message' in foreign.error ? foreign.error.message : '').toMatch(/engine build/)
      expect(foreign.valueJson).toBeUndefined()
      const huge = runIn(image, 'return kept', {
        id: memory.id,
        memory: { ...memory, byteLength: image.loaded.capBytes + 64 * 1024 },
      })
      expect(huge.error?.kind).toBe('memory')
      expect(huge.valueJson).toBeUndefined()
      // The image still serves the genuine memory, and plain runs.
      expect(runIn(image, 'return kept', { id: memory.id, memory }).valueJson).toBe('1')
      expect(runIn(image, 'return typeof kept').valueJson).toBe('"undefined"')
      image.dispose()
    },
  )

  test('a refused memory yields no session memory in the outcome (the session would keep an empty state)', async () => {
    const image = await boot()
    const memory = memoryOf(runIn(image, 'globalThis.kept = 1', {}))
    runIn(image, 'return 0')
    const foreign = runIn(image, 'return kept', { id: memory.id, memory: { ...memory, fingerprint: '0'.repeat(32) } })
    expect(foreign.error?.kind).toBe('crash')
    expect(foreign.session).toBeUndefined()
    image.dispose()
  })

  test(
    'a plain run after a session run starts from the booted state, ' +
      'and disposing the image after session runs does not abort',
    async () => {
      const image = await boot()
      const left = memoryOf(runIn(image, 'globalThis.mine = "session"; return mine', {}))
      expect(runIn(image, 'return typeof mine', { id: left.id }).valueJson).toBe('"string"')
      expect(runIn(image, 'return [typeof mine, typeof globalThis.mine]').valueJson).toBe('["undefined","undefined"]')
      expect(image.resident).toBeUndefined()
      // Left holding a session's memory (resident), with objects and a pending job the session owns.
      memoryOf(
        runIn(
          image,
          'globalThis.more = new Array(1000).fill({ a: 1 }); ' +
            'Promise.resolve().then(() => 0).then(() => { globalThis.late = 1 }); return 1',
          {},
        ),
      )
      expect(image.resident).toBeDefined()
      // JS_FreeRuntime asserts that every object was freed: a leaking or corrupted state aborts here.
      expect(() => image.dispose()).not.toThrow()
    },
  )
})
