import { EventEmitter } from 'node:events'
import type { ServerResponse } from 'node:http'
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest'
import { McpSessionTable } from './sessions.js'

/** Stands in for a response: only its 'close' event matters to the table. */
const response = (): ServerResponse & EventEmitter => new EventEmitter() as ServerResponse & EventEmitter
const resources = (): { close: () => Promise<void>; closed: number } => {
  const r = { closed: 0, close: () => Promise.resolve(void r.closed++) }
  return r
}

describe('McpSessionTable', () => {
  beforeEach(() => void vi.useFakeTimers())
  afterEach(() => void vi.useRealTimers())

  test('reservations count toward the cap until they become sessions or are released', () => {
    const table = new McpSessionTable<ReturnType<typeof resources>>({ idleMs: 1000, max: 2 })
    expect([table.reserve(), table.reserve(), table.reserve()]).toEqual([true, true, false])
    table.release()
    table.add('a', resources(), response())
    expect([table.size, table.reserved]).toEqual([1, 0])
    expect([table.reserve(), table.reserve()]).toEqual([true, false])
  })

  test('a session expires idleMs after its last open response closed, never while one is open', async () => {
    const table = new McpSessionTable<ReturnType<typeof resources>>({ idleMs: 1000, max: 10 })
    const a = resources()
    const first = response()
    table.reserve()
    table.add('a', a, first)
    await vi.advanceTimersByTimeAsync(5000)
    expect(table.get('a')).toBe(a) // the initialize response is still open
    first.emit('close')
    const stream = response()
    await vi.advanceTimersByTimeAsync(900)
    expect(table.track('a', stream)).toBe(true)
    await vi.advanceTimersByTimeAsync(5000)
    expect([table.size, a.closed]).toEqual([1, 0])
    stream.emit('close')
    expect(table.retryAfterSeconds()).toBe(1)
    await vi.advanceTimersByTimeAsync(1000)
    expect([table.get('a'), table.size, a.closed]).toEqual([undefined, 0, 1])
    expect(table.track('a', response())).toBe(false)
  })

  test('closeAll closes every session; later reservations fail and a late add closes its resources', async () => {
    const table = new McpSessionTable<ReturnType<typeof resources>>({ idleMs: 1000, max: 10 })
    const a = resources()
    const late = resources()
    table.reserve()
    table.reserve()
    table.add('a', a, response())
    await table.closeAll()
    table.add('b', late, response())
    await vi.advanceTimersByTimeAsync(0)
    expect([a.closed, late.closed, table.size, table.reserved, table.reserve()]).toEqual([1, 1, 0, 0, false])
  })
})
