import { expect, test } from 'vitest'
import { CONTROL_NONE, controlOf, stopOf, type HostStop } from './protocol.js'

test('every host stop has its own control word value, never CONTROL_NONE, and reads back as itself', () => {
  const stops: HostStop[] = ['abort', 'wall', 'limit-calls', 'limit-pending', 'limit-args']
  const values = stops.map(controlOf)
  expect(new Set(values).size).toBe(stops.length)
  expect(values).not.toContain(CONTROL_NONE)
  expect(values.map(stopOf)).toEqual(stops)
})
