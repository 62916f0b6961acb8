import { describe, expect, test } from 'vitest'
import { Lifetime, LifetimeError } from './lifetime.js'

describe('Lifetime', () => {
  test('dispose lets the value go the default way, once', () => {
    const gone: string[] = []
    const held = new Lifetime('s', (v) => gone.push(v))
    expect(held.value).toBe('s')
    held.dispose()
    held.dispose()
    expect(gone).toEqual(['s'])
    expect(held.alive).toBe(false)
  })

  test('end hands the value over: dispose then does nothing, and a second end or a read throws', () => {
    const gone: string[] = []
    const held = new Lifetime('s', (v) => gone.push(v), 'the session')
    expect(held.end((v) => `${v} given`)).toBe('s given')
    held.dispose()
    expect(gone).toEqual([])
    expect(() => held.value).toThrow(LifetimeError)
    expect(() => held.end(() => 0)).toThrow('the session was used after it was let go')
  })

  test('a use that throws still ends the lifetime: the value is not let go twice', () => {
    const gone: string[] = []
    const held = new Lifetime('s', (v) => gone.push(v))
    expect(() =>
      held.end(() => {
        throw new Error('failed')
      }),
    ).toThrow('failed')
    held.dispose()
    expect(gone).toEqual([])
  })
})
