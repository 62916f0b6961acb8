import { describe, expect, it } from 'vitest'
import * as errors from './errors.js'
import { SandboxUsageError } from './errors.js'

const brand = Symbol.for('@ptc/sandbox.error')

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
  const revocable = Proxy.revocable(new SandboxUsageError('x'), {})
  revocable.revoke()
  return [new Proxy({}, traps), new Proxy(new SandboxUsageError('x'), traps), revocable.proxy]
}

/** A subclass, as a backend or a host might write one. */
class DisposedRuntimeError extends SandboxUsageError {
  constructor() {
    super('the runtime is disposed', 'SANDBOX_DISPOSED')
  }
}

describe('SandboxUsageError', () => {
  it('has a stable code (SANDBOX_MISUSE unless given), the class name as name, and the message', () => {
    const e = new SandboxUsageError('bindings must be an array of strings')
    expect(e instanceof Error).toBe(true)
    expect([e.code, e.name, e.message]).toEqual(['SANDBOX_MISUSE', 'SandboxUsageError', 'bindings must be an array of strings'])
    const disposed = new SandboxUsageError('the runtime is disposed', 'SANDBOX_DISPOSED')
    expect([disposed.code, disposed.name]).toEqual(['SANDBOX_DISPOSED', 'SandboxUsageError'])
    const sub = new DisposedRuntimeError()
    expect([sub.code, sub.name, sub instanceof SandboxUsageError]).toEqual(['SANDBOX_DISPOSED', 'DisposedRuntimeError', true])
  })

  it('keeps the cause it wraps, and has none otherwise', () => {
    const cause = new TypeError('inner')
    expect(new SandboxUsageError('outer', 'SANDBOX_MISUSE', { cause }).cause).toBe(cause)
    expect('cause' in new SandboxUsageError('outer')).toBe(false)
  })

  it('instanceof SandboxUsageError holds across two copies of the module; a subclass checks the prototype', async () => {
    const copy = await secondCopy()
    expect(copy.SandboxUsageError).not.toBe(SandboxUsageError)
    expect(new copy.SandboxUsageError('x') instanceof SandboxUsageError).toBe(true)
    expect(new SandboxUsageError('x') instanceof copy.SandboxUsageError).toBe(true)
    expect(new DisposedRuntimeError() instanceof copy.SandboxUsageError).toBe(true)
    expect(new SandboxUsageError('x') instanceof DisposedRuntimeError).toBe(false)
    expect(new copy.SandboxUsageError('x') instanceof DisposedRuntimeError).toBe(false)
  })

  it('the base check is the brand: an object carrying it is an instance, one without it is not', () => {
    expect(Object.create(null, { [brand]: { value: true } }) instanceof SandboxUsageError).toBe(true)
    expect(Object.create(null, { [brand]: { value: true } }) instanceof DisposedRuntimeError).toBe(false)
    expect(Object.create(null, { [brand]: { value: 1 } }) instanceof SandboxUsageError).toBe(false)
    expect(Object.create(null, { [Symbol.for('@ptc/tools.error')]: { value: true } }) instanceof SandboxUsageError).toBe(false)
    expect(Object.assign(new Error('x'), { name: 'SandboxUsageError', code: 'SANDBOX_MISUSE' }) instanceof SandboxUsageError).toBe(false)
  })

  it('never throws: hostile and revoked proxies are not instances', () => {
    for (const value of hostileValues()) {
      expect(() => value instanceof SandboxUsageError).not.toThrow()
      expect(value instanceof SandboxUsageError).toBe(false)
      expect(value instanceof DisposedRuntimeError).toBe(false)
    }
  })

  it('plain objects, null and primitives are not instances', () => {
    for (const value of [{}, { code: 'SANDBOX_MISUSE' }, [], null, undefined, 0, 'SandboxUsageError', false, Symbol('x'), 1n, () => undefined, new Error('x')]) {
      expect(value instanceof SandboxUsageError).toBe(false)
      expect(value instanceof DisposedRuntimeError).toBe(false)
    }
  })
})
