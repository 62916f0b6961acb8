import { describe, expect, it } from 'vitest'
import * as errors from './errors.js'
import { SandboxBackendUnavailableError } from './errors.js'

const brand = Symbol.for('@ptc/sandbox-isolated-vm.error')

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
  const revocable = Proxy.revocable(new SandboxBackendUnavailableError('missing-module', 'x'), {})
  revocable.revoke()
  return [new Proxy({}, traps), new Proxy(new SandboxBackendUnavailableError('node-snapshot', 'x'), traps), revocable.proxy]
}

/** A subclass, as a host might write one. */
class NoIsolatedVmError extends SandboxBackendUnavailableError {
  constructor() {
    super('missing-module', 'not installed')
  }
}

describe('SandboxBackendUnavailableError', () => {
  it('has a stable code, the class name as name, the backend, the reason and the message', () => {
    const e = new SandboxBackendUnavailableError('node-snapshot', 'start node with --no-node-snapshot')
    expect(e instanceof Error).toBe(true)
    expect([e.code, e.name, e.backend, e.reason, e.message]).toEqual([
      'SANDBOX_BACKEND_UNAVAILABLE',
      'SandboxBackendUnavailableError',
      'isolated-vm',
      'node-snapshot',
      'start node with --no-node-snapshot',
    ])
    const sub = new NoIsolatedVmError()
    expect([sub.code, sub.name, sub.reason]).toEqual(['SANDBOX_BACKEND_UNAVAILABLE', 'NoIsolatedVmError', 'missing-module'])
  })

  it('keeps the cause it wraps, and has none otherwise', () => {
    const cause = Object.assign(new Error("Cannot find module 'isolated-vm'"), { code: 'MODULE_NOT_FOUND' })
    expect(new SandboxBackendUnavailableError('missing-module', 'outer', { cause }).cause).toBe(cause)
    expect('cause' in new SandboxBackendUnavailableError('invalid-module', 'outer')).toBe(false)
  })

  it('instanceof holds across two copies of the module; a subclass checks the prototype', async () => {
    const copy = await secondCopy()
    expect(copy.SandboxBackendUnavailableError).not.toBe(SandboxBackendUnavailableError)
    expect(new copy.SandboxBackendUnavailableError('missing-module', 'x') instanceof SandboxBackendUnavailableError).toBe(true)
    expect(new SandboxBackendUnavailableError('missing-module', 'x') instanceof copy.SandboxBackendUnavailableError).toBe(true)
    expect(new NoIsolatedVmError() instanceof copy.SandboxBackendUnavailableError).toBe(true)
    expect(new copy.SandboxBackendUnavailableError('missing-module', 'x') instanceof NoIsolatedVmError).toBe(false)
  })

  it('the base check is the brand: an object carrying it is an instance, one without it is not', () => {
    expect(Object.create(null, { [brand]: { value: true } }) instanceof SandboxBackendUnavailableError).toBe(true)
    expect(Object.create(null, { [brand]: { value: true } }) instanceof NoIsolatedVmError).toBe(false)
    expect(Object.create(null, { [Symbol.for('@ptc/sandbox.error')]: { value: true } }) instanceof SandboxBackendUnavailableError).toBe(false)
    expect(Object.assign(new Error('x'), { code: 'SANDBOX_BACKEND_UNAVAILABLE' }) instanceof SandboxBackendUnavailableError).toBe(false)
  })

  it('never throws: hostile and revoked proxies are not instances', () => {
    for (const value of hostileValues()) {
      expect(() => value instanceof SandboxBackendUnavailableError).not.toThrow()
      expect(value instanceof SandboxBackendUnavailableError).toBe(false)
      expect(value instanceof NoIsolatedVmError).toBe(false)
    }
  })

  it('plain objects, null and primitives are not instances', () => {
    for (const value of [{}, { code: 'SANDBOX_BACKEND_UNAVAILABLE' }, [], null, undefined, 0, 'x', true, Symbol('x'), 1n, () => undefined, new Error('x')]) {
      expect(value instanceof SandboxBackendUnavailableError).toBe(false)
      expect(value instanceof NoIsolatedVmError).toBe(false)
    }
  })
})
