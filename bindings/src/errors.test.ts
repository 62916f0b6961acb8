import { describe, expect, it } from 'vitest'
import * as errors from './errors.js'
import { BindingNameError, BindingsError } from './errors.js'

const brand = Symbol.for('@ptc/bindings.error')

/** A second copy of this module (another URL, so another module instance): a bundled and a source build side by side. */
async function secondCopy(): Promise<typeof errors> {
  return (await import(/* @vite-ignore */ new URL('./errors.ts?copy', import.meta.url).href)) as typeof errors
}

/** Values whose every trap throws: a hostile Proxy and a revoked one. */
function hostileValues(): unknown[] {
  const boom = (): never => {
    throw new Error('trap')
  }
  const traps = { get: boom, has: boom, getPrototypeOf: boom, getOwnPropertyDescriptor: boom, ownKeys: boom }
  const revocable = Proxy.revocable(new BindingNameError([]), {})
  revocable.revoke()
  return [new Proxy({}, traps), new Proxy(new BindingsError('INVALID_BINDING_NAMES', 'x'), traps), revocable.proxy]
}

const problem = { index: 1, name: 'run_code', message: '"run_code" is reserved' }

describe('BindingsError', () => {
  it('has a stable code, the class name as name, and the message', () => {
    const base = new BindingsError('INVALID_BINDING_NAMES', 'bad')
    expect(base instanceof Error).toBe(true)
    expect([base.code, base.name, base.message]).toEqual(['INVALID_BINDING_NAMES', 'BindingsError', 'bad'])
    const e = new BindingNameError([problem])
    expect([e.code, e.name, e.message]).toEqual(['INVALID_BINDING_NAMES', 'BindingNameError', 'invalid binding names: [1] "run_code" is reserved'])
    expect(e.problems).toEqual([problem])
    expect(Object.isFrozen(e.problems)).toBe(true)
  })

  it('keeps the cause it wraps, and has none otherwise', () => {
    const cause = new Error('inner')
    expect(new BindingsError('INVALID_BINDING_NAMES', 'outer', { cause }).cause).toBe(cause)
    expect('cause' in new BindingsError('INVALID_BINDING_NAMES', 'outer')).toBe(false)
    expect('cause' in new BindingNameError([problem])).toBe(false)
  })

  it('instanceof BindingsError holds across two copies of the module; a subclass checks the prototype', async () => {
    const copy = await secondCopy()
    expect(copy.BindingsError).not.toBe(BindingsError)
    expect(new copy.BindingNameError([problem]) instanceof BindingsError).toBe(true)
    expect(new copy.BindingsError('INVALID_BINDING_NAMES', 'x') instanceof BindingsError).toBe(true)
    expect(new BindingNameError([problem]) instanceof copy.BindingsError).toBe(true)
    expect(new copy.BindingNameError([problem]) instanceof BindingNameError).toBe(false)
    expect(new BindingNameError([problem]) instanceof BindingNameError).toBe(true)
    expect(new BindingsError('INVALID_BINDING_NAMES', 'x') instanceof BindingNameError).toBe(false)
  })

  it('the base check is the brand: an object carrying it is an instance, one without it is not', () => {
    expect(Object.create(null, { [brand]: { value: true } }) instanceof BindingsError).toBe(true)
    expect(Object.create(null, { [brand]: { value: true } }) instanceof BindingNameError).toBe(false)
    expect(Object.create(null, { [Symbol.for('@ptc/tools.error')]: { value: true } }) instanceof BindingsError).toBe(false)
    expect(Object.assign(new Error('x'), { name: 'BindingsError', code: 'INVALID_BINDING_NAMES' }) instanceof BindingsError).toBe(false)
  })

  it('never throws: hostile and revoked proxies are not instances', () => {
    for (const value of hostileValues()) {
      expect(() => value instanceof BindingsError).not.toThrow()
      expect(value instanceof BindingsError).toBe(false)
      expect(value instanceof BindingNameError).toBe(false)
    }
  })

  it('plain objects, null and primitives are not instances', () => {
    for (const value of [{}, { code: 'INVALID_BINDING_NAMES' }, [], null, undefined, 0, 'BindingsError', true, Symbol('x'), 1n, () => undefined, new Error('x')]) {
      expect(value instanceof BindingsError).toBe(false)
      expect(value instanceof BindingNameError).toBe(false)
    }
  })
})
