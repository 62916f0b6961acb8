/**
 * isolated-vm sessions: each run of a session is held to its own `memoryBytes`, as outside a session, though
 * its isolate was made (with its memory limit) by an earlier run that asked for more; and a program's runtime
 * error after it froze `globalThis` is an `exception`, in a session as outside one.
 */
import type { CodeRunRequest } from '@ptc/sandbox'
import { afterAll, describe, expect, test } from 'vitest'
import { createIsolatedVmRuntime, isolatedVmAvailability } from './index.js'

const availability = isolatedVmAvailability()
const MIB = 1024 * 1024

const request = (code: string, extra: Partial<CodeRunRequest> = {}): CodeRunRequest => ({
  code,
  language: 'javascript',
  bindings: ['echo'],
  call: async (_name, args) => args,
  ...extra,
})

/** About 130 MB of live arrays, built in one synchronous stretch, then `tail`. */
const build = (tail = 'return parts.length'): string =>
  `const parts = []; for (let i = 0; i < 130; i++) parts.push(new Array(1 << 17).fill(i)); ${tail}`

const containments = ['process', 'none'] as const
describe.skipIf(!availability.available).each(containments)('isolated-vm session limits (%s)', (containment) => {
  const rt = createIsolatedVmRuntime({ containment, processes: 1 })
  afterAll(() => rt.dispose())
  let keys = 0
  const fresh = (name: string): string => `${name}-${++keys}`

  test('a later run of a session is held to its own memoryBytes, not to the larger one of its isolate', async () => {
    const outside = await rt.run(request(build(), { limits: { memoryBytes: 16 * MIB } }))
    expect(outside.error?.kind).toBe('memory')
    const s = fresh('memory')
    const first = await rt.run(request('const earlier = "kept"', { session: s, limits: { memoryBytes: 256 * MIB } }))
    expect(first.session).toMatchObject({ kept: true })
    const later = await rt.run(request(build(), { session: s, limits: { memoryBytes: 16 * MIB } }))
    expect(later.error?.kind).toBe('memory')
    expect(later.value).toBeUndefined()
    expect(later.session).toMatchObject({ kept: false })
    // With the budget it asked for, the same program runs in its session.
    const roomy = fresh('memory')
    await rt.run(request('const earlier = "kept"', { session: roomy, limits: { memoryBytes: 256 * MIB } }))
    const built = await rt.run(request(build('return earlier'), { session: roomy, limits: { memoryBytes: 256 * MIB } }))
    expect(built.error).toBeUndefined()
    expect(built.value).toBe('kept')
  })

  test('a later run within its smaller budget keeps the session and its state', async () => {
    const s = fresh('within')
    await rt.run(request('const earlier = 41', { session: s, limits: { memoryBytes: 256 * MIB } }))
    for (const code of ['return earlier + 1', 'throw new Error("no")']) {
      const later = await rt.run(request(code, { session: s, limits: { memoryBytes: 16 * MIB } }))
      expect(later.error?.kind ?? 'ok').toBe(code.startsWith('throw') ? 'exception' : 'ok')
      expect(later.session).toMatchObject({ kept: true })
    }
    expect((await rt.run(request('return earlier', { session: s, limits: { memoryBytes: 16 * MIB } }))).value).toBe(41)
  })

  test('after Object.freeze(globalThis), a runtime TypeError is an exception in a session too', async () => {
    const s = fresh('frozen')
    expect((await rt.run(request('Object.freeze(globalThis)', { session: s }))).error).toBeUndefined()
    const declared = await rt.run(request('const y = 1; return y', { session: s }))
    expect(declared.error?.kind).toBe('exception')
    expect(declared.error?.message).toMatch(/^TypeError: /)
    expect((await rt.run(request('null.x', { session: s }))).error?.kind).toBe('exception')
    expect((await rt.run(request('return (', { session: s }))).error?.kind).toBe('syntax')
  })
})
