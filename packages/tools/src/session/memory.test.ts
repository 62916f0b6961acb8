import { describe, expect, test } from 'vitest'
import type { SessionEvent } from '../types/scope.js'
import { MemorySession } from './memory.js'

describe('MemorySession', () => {
  test('keeps events in append order', async () => {
    const session = new MemorySession()
    await Promise.all([0, 1, 2].map((i) => session.append({ type: i % 2 === 0 ? 'even' : 'odd', time: i })))
    expect(session.events.map((e) => e.time)).toEqual([0, 1, 2])
    expect(session.ofType('even').map((e) => e.time)).toEqual([0, 2])
    expect(session.ofType('none')).toEqual([])
  })

  test('mutating an appended event later cannot change history', async () => {
    const session = new MemorySession()
    const event: SessionEvent = { type: 'tool/call', time: 1, args: { path: 'a' } }
    await session.append(event)
    ;(event.args as { path: string }).path = 'changed'
    event.type = 'changed'
    expect(session.events[0]).toEqual({ type: 'tool/call', time: 1, args: { path: 'a' } })
  })

  test('the events view and the stored events are frozen', async () => {
    const session = new MemorySession()
    await session.append({ type: 't', time: 1, data: { x: 1 } })
    const view = session.events
    expect(Object.isFrozen(view)).toBe(true)
    expect(() => (view as SessionEvent[]).push({ type: 'x', time: 0 })).toThrow(TypeError)
    expect(() => {
      ;(view[0]?.data as { x: number }).x = 2
    }).toThrow(TypeError)
    await session.append({ type: 't', time: 2 })
    expect(view).toHaveLength(1)
    expect(session.events).toHaveLength(2)
  })

  test('a non-JSON event rejects and stores nothing', async () => {
    const session = new MemorySession()
    const cyclic: SessionEvent = { type: 't', time: 1 }
    cyclic.self = cyclic
    await expect(session.append(cyclic)).rejects.toMatchObject({ code: 'NOT_JSON' })
    await expect(session.append({ type: 't', time: 1, n: 1n })).rejects.toMatchObject({ code: 'NOT_JSON' })
    await expect(session.append({ time: 1 } as unknown as SessionEvent)).rejects.toMatchObject({
      code: 'INVALID_EVENT',
    })
    expect(session.events).toEqual([])
  })
})
