import { describe, expect, test } from 'vitest'
import type { Session, SessionEvent } from '../types/scope.js'
import { SessionQueue } from './queue.js'

const event = (n: number): SessionEvent => ({ type: 't', time: n, n })

describe('SessionQueue', () => {
  test('appends in queue order, even when an earlier event is built more slowly', async () => {
    const written: unknown[] = []
    const queue = new SessionQueue({ append: (e) => void written.push(e.n) })
    queue.append(async () => {
      await new Promise((resolve) => setTimeout(resolve, 20))
      return event(1)
    })
    queue.append(event(2))
    queue.append(() => event(3))
    expect(written).toEqual([]) // the caller never waits
    expect(await queue.drain()).toBeUndefined()
    expect(written).toEqual([1, 2, 3])
  })

  test('a builder that builds nothing appends nothing; the events after it wait for it and keep their order', async () => {
    const written: unknown[] = []
    const queue = new SessionQueue({ append: (e) => void written.push(e.n) })
    let decide = (_: boolean): void => undefined
    const decided = new Promise<boolean>((resolve) => (decide = resolve))
    queue.append(async () => ((await decided) ? event(1) : undefined))
    queue.append(event(2))
    await new Promise((resolve) => setTimeout(resolve, 10))
    expect(written).toEqual([])
    decide(false)
    expect(await queue.drain()).toBeUndefined()
    expect(written).toEqual([2])
  })

  test('keeps the first failure and still attempts the later events', async () => {
    const written: unknown[] = []
    const session: Session = {
      append: async (e) => {
        if (e.n === 2) throw new Error('disk full')
        written.push(e.n)
      },
    }
    const queue = new SessionQueue(session)
    queue.append(event(1))
    queue.append(event(2))
    queue.append(() => {
      throw new Error('builder bug')
    })
    queue.append(event(4))
    const failure = await queue.drain()
    expect((failure?.error as Error).message).toBe('disk full')
    expect(written).toEqual([1, 4])
  })

  test('a session that never confirms is reported as failed after confirmMs instead of holding the drain forever', async () => {
    let release!: () => void
    const stuck = new Promise<void>((resolve) => (release = resolve))
    const written: unknown[] = []
    const queue = new SessionQueue({ append: async (e) => (e.n === 1 ? stuck : void written.push(e.n)) }, 50)
    queue.append(event(1))
    queue.append(event(2))
    const failure = await queue.drain()
    expect(failure?.error).toMatchObject({
      name: 'SessionError',
      code: 'SESSION_WRITE_FAILED',
      message: expect.stringContaining('within 50 ms'),
    })
    expect(written).toEqual([])
    // The store recovers: the later event is still appended, in order, and a new drain is clean.
    release()
    expect(await queue.drain()).toBeUndefined()
    expect(written).toEqual([2])
  })
})
