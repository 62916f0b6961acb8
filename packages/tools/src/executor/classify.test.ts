import { describe, expect, test } from 'vitest'
import { isConcurrencySafeCall } from './classify.js'

describe('isConcurrencySafeCall', () => {
  test('only an exact true is parallel', () => {
    for (const answer of [1, 'true', {}, [], new Boolean(true), null]) {
      expect(isConcurrencySafeCall({ isConcurrencySafe: () => answer as boolean }, {})).toBe(false)
    }
    expect(isConcurrencySafeCall({ isConcurrencySafe: () => true }, {})).toBe(true)
  })

  test('no classifier and a throwing classifier are exclusive', () => {
    expect(isConcurrencySafeCall({}, {})).toBe(false)
    expect(
      isConcurrencySafeCall(
        {
          isConcurrencySafe: () => {
            throw new Error('no')
          },
        },
        {},
      ),
    ).toBe(false)
  })

  test('the classifier sees the arguments and its definition as this', () => {
    const definition = {
      readOnly: ['get'],
      isConcurrencySafe(this: { readOnly: string[] }, args: unknown): boolean {
        return this.readOnly.includes((args as { op: string }).op)
      },
    }
    expect(isConcurrencySafeCall(definition, { op: 'get' })).toBe(true)
    expect(isConcurrencySafeCall(definition, { op: 'put' })).toBe(false)
  })
})
