import { describe, expect, it } from 'vitest'
import { brandedErrorChecks } from '../../../test/support/branded-error.js'
import * as errors from './errors.js'
import { SandboxBackendUnavailableError } from './errors.js'

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
    expect([sub.code, sub.name, sub.reason]).toEqual([
      'SANDBOX_BACKEND_UNAVAILABLE',
      'NoIsolatedVmError',
      'missing-module',
    ])
  })

  it('keeps the cause it wraps, and has none otherwise', () => {
    const cause = Object.assign(new Error("Cannot find module 'isolated-vm'"), { code: 'MODULE_NOT_FOUND' })
    expect(new SandboxBackendUnavailableError('missing-module', 'outer', { cause }).cause).toBe(cause)
    expect('cause' in new SandboxBackendUnavailableError('invalid-module', 'outer')).toBe(false)
  })

  brandedErrorChecks({
    base: SandboxBackendUnavailableError,
    sub: NoIsolatedVmError,
    brand: '@ptc/sandbox-isolated-vm.error',
    code: 'SANDBOX_BACKEND_UNAVAILABLE',
    make: () => new SandboxBackendUnavailableError('missing-module', 'x'),
    makeSub: () => new NoIsolatedVmError(),
    secondCopy: async () => {
      const copy = (await import(/* @vite-ignore */ new URL('./errors.ts?copy', import.meta.url).href)) as typeof errors
      return {
        base: copy.SandboxBackendUnavailableError,
        instance: new copy.SandboxBackendUnavailableError('missing-module', 'x'),
      }
    },
  })
})
