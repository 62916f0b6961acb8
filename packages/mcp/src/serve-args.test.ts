import { describe, expect, test } from 'vitest'
import { discoveryOption } from './serve-args.js'

describe('discoveryOption', () => {
  test("the serve flags win over the host's discovery (a config's); neither says: the executor's default", () => {
    expect(discoveryOption(undefined, { off: false })).toBeUndefined()
    expect(discoveryOption(false, { off: false })).toBe(false)
    expect(discoveryOption({ budgetChars: 100, alwaysLoaded: ['a'] }, { off: false })).toEqual({
      budgetChars: 100,
      alwaysLoaded: ['a'],
    })
    expect(discoveryOption({ budgetChars: 100, alwaysLoaded: ['a'] }, { off: false, budgetChars: 900 })).toEqual({
      budgetChars: 900,
      alwaysLoaded: ['a'],
    })
    expect(discoveryOption(false, { off: false, alwaysLoaded: ['b'] })).toEqual({ alwaysLoaded: ['b'] })
    expect(discoveryOption({ budgetChars: 100 }, { off: true })).toBe(false)
  })
})
