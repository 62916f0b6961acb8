import { describe, expect, it } from 'vitest'
import { brandedErrorChecks } from '../../test/support/branded-error.js'
import * as errors from './errors.js'
import { BindingNameError, BindingsError } from './errors.js'

const problem = { index: 1, name: 'run_code', message: '"run_code" is reserved' }

describe('BindingsError', () => {
  it('has a stable code, the class name as name, and the message', () => {
    const base = new BindingsError('INVALID_BINDING_NAMES', 'bad')
    expect(base instanceof Error).toBe(true)
    expect([base.code, base.name, base.message]).toEqual(['INVALID_BINDING_NAMES', 'BindingsError', 'bad'])
    const e = new BindingNameError([problem])
    expect([e.code, e.name, e.message]).toEqual([
      'INVALID_BINDING_NAMES',
      'BindingNameError',
      'invalid binding names: [1] "run_code" is reserved',
    ])
    expect(e.problems).toEqual([problem])
    expect(Object.isFrozen(e.problems)).toBe(true)
  })

  it('keeps the cause it wraps, and has none otherwise', () => {
    const cause = new Error('inner')
    expect(new BindingsError('INVALID_BINDING_NAMES', 'outer', { cause }).cause).toBe(cause)
    expect('cause' in new BindingsError('INVALID_BINDING_NAMES', 'outer')).toBe(false)
    expect('cause' in new BindingNameError([problem])).toBe(false)
  })

  brandedErrorChecks({
    base: BindingsError,
    sub: BindingNameError,
    brand: '@ptc/bindings.error',
    code: 'INVALID_BINDING_NAMES',
    make: () => new BindingsError('INVALID_BINDING_NAMES', 'x'),
    makeSub: () => new BindingNameError([problem]),
    secondCopy: async () => {
      const copy = (await import(/* @vite-ignore */ new URL('./errors.ts?copy', import.meta.url).href)) as typeof errors
      return { base: copy.BindingsError, instance: new copy.BindingsError('INVALID_BINDING_NAMES', 'x') }
    },
  })
})
