import { describe, expect, it } from 'vitest'
import { brandedErrorChecks } from '../../../test/support/branded-error.js'
import * as errors from './errors.js'
import { SandboxUsageError } from './errors.js'

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
    expect([e.code, e.name, e.message]).toEqual([
      'SANDBOX_MISUSE',
      'SandboxUsageError',
      'bindings must be an array of strings',
    ])
    const disposed = new SandboxUsageError('the runtime is disposed', 'SANDBOX_DISPOSED')
    expect([disposed.code, disposed.name]).toEqual(['SANDBOX_DISPOSED', 'SandboxUsageError'])
    const sub = new DisposedRuntimeError()
    expect([sub.code, sub.name, sub instanceof SandboxUsageError]).toEqual([
      'SANDBOX_DISPOSED',
      'DisposedRuntimeError',
      true,
    ])
  })

  it('keeps the cause it wraps, and has none otherwise', () => {
    const cause = new TypeError('inner')
    expect(new SandboxUsageError('outer', 'SANDBOX_MISUSE', { cause }).cause).toBe(cause)
    expect('cause' in new SandboxUsageError('outer')).toBe(false)
  })

  brandedErrorChecks({
    base: SandboxUsageError,
    sub: DisposedRuntimeError,
    brand: '@ptc/sandbox.error',
    code: 'SANDBOX_MISUSE',
    make: () => new SandboxUsageError('x'),
    makeSub: () => new DisposedRuntimeError(),
    secondCopy: async () => {
      const copy = (await import(/* @vite-ignore */ new URL('./errors.ts?copy', import.meta.url).href)) as typeof errors
      return { base: copy.SandboxUsageError, instance: new copy.SandboxUsageError('x') }
    },
  })
})
