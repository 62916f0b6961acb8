import { getEventListeners } from 'node:events'
import { describe, expect, test, vi } from 'vitest'
import { whenAborted as sandboxWhenAborted } from './abort.js'
import { whenAborted as toolsWhenAborted } from '../../../packages/tools/src/pipeline/signal.js'

// The sandbox and @ptc/tools each have this helper (neither package depends on the other): both are held to it.
describe.each([
  ['@ptc/sandbox', sandboxWhenAborted],
  ['@ptc/tools', toolsWhenAborted],
])('whenAborted (%s)', (_name, whenAborted) => {
  test('a hundred waiters share one listener, which leaves with the last of them', () => {
    const controller = new AbortController()
    const stops = Array.from({ length: 100 }, () => whenAborted(controller.signal, () => undefined))
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1)
    for (const stop of stops.slice(1)) stop()
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1)
    stops[0]?.()
    stops[0]?.()
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0)
    // A new waiter after that adds the listener again.
    const again = whenAborted(controller.signal, () => undefined)
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1)
    again()
  })

  test('an abort runs every waiter that has not stopped, once each; one function may wait twice', () => {
    const controller = new AbortController()
    const ran: string[] = []
    const twice = (): void => void ran.push('twice')
    whenAborted(controller.signal, () => ran.push('a'))
    const stopB = whenAborted(controller.signal, () => ran.push('b'))
    whenAborted(controller.signal, twice)
    const stopTwice = whenAborted(controller.signal, twice)
    stopB()
    stopTwice()
    controller.abort()
    controller.abort()
    expect(ran).toEqual(['a', 'twice'])
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0)
  })

  test('a waiter that stops another during the abort, or throws, does not keep the others from running', () => {
    const controller = new AbortController()
    const ran: string[] = []
    const thrown: (() => void)[] = []
    const nextTick = vi
      .spyOn(process, 'nextTick')
      .mockImplementation(((callback: () => void) => void thrown.push(callback)) as typeof process.nextTick)
    try {
      whenAborted(controller.signal, () => {
        ran.push('first')
        throw new Error('a waiter failed')
      })
      whenAborted(controller.signal, () => ran.push('second'))
      controller.abort()
    } finally {
      nextTick.mockRestore()
    }
    expect(ran).toEqual(['first', 'second'])
    // The error is reported as an uncaught exception on the next tick, as an event listener's would be.
    expect(thrown).toHaveLength(1)
    expect(() => thrown[0]?.()).toThrow('a waiter failed')
  })

  test('waiting on an aborted signal never runs the waiter, like addEventListener', () => {
    const controller = new AbortController()
    controller.abort()
    let ran = false
    whenAborted(controller.signal, () => (ran = true))
    expect(ran).toBe(false)
  })
})
