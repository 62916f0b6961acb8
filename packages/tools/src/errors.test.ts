import { describe, expect, it } from 'vitest'
import * as errors from './errors.js'
import { SessionError, ToolAbortedError, ToolArgsError, ToolExecutionError, ToolNotFoundError, ToolsError, ToolTimeoutError } from './errors.js'

const brand = Symbol.for('@ptc/tools.error')

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
  const revocable = Proxy.revocable(new ToolsError('TOOL_ERROR', 'x'), {})
  revocable.revoke()
  return [new Proxy({}, traps), new Proxy(new ToolsError('TOOL_ERROR', 'x'), traps), revocable.proxy]
}

describe('ToolsError', () => {
  it('has a stable code, the class name as name, and the message', () => {
    const e = new ToolsError('NOT_JSON', 'bad value')
    expect(e).toBeInstanceOf(Error)
    expect([e.code, e.name, e.message]).toEqual(['NOT_JSON', 'ToolsError', 'bad value'])
    const found = new ToolNotFoundError('lookup')
    expect([found.code, found.name, found.message, found.toolName]).toEqual(['UNKNOWN_TOOL', 'ToolNotFoundError', 'unknown tool: lookup', 'lookup'])
    expect([new ToolTimeoutError(50).code, new ToolTimeoutError(50).name]).toEqual(['TOOL_TIMEOUT', 'ToolTimeoutError'])
    expect(new ToolAbortedError('ABORTED_BEFORE_DISPATCH', 'stop').code).toBe('ABORTED_BEFORE_DISPATCH')
    expect([new SessionError('SESSION_CLOSED', 'closed').code, new SessionError('SESSION_CLOSED', 'closed').name]).toEqual(['SESSION_CLOSED', 'SessionError'])
  })

  it('keeps the cause it wraps, and has none otherwise', () => {
    const cause = new RangeError('inner')
    expect(new ToolsError('TOOL_ERROR', 'outer', { cause }).cause).toBe(cause)
    expect(new ToolExecutionError('outer', { cause }).cause).toBe(cause)
    expect(new ToolArgsError('bad', [], { cause: 'text' }).cause).toBe('text')
    expect('cause' in new ToolsError('TOOL_ERROR', 'outer')).toBe(false)
  })

  it('instanceof ToolsError holds across two copies of the module; a subclass checks the prototype', async () => {
    const copy = await secondCopy()
    expect(copy.ToolsError).not.toBe(ToolsError)
    expect(new copy.ToolNotFoundError('x') instanceof ToolsError).toBe(true)
    expect(new copy.ToolsError('TOOL_ERROR', 'x') instanceof ToolsError).toBe(true)
    expect(new ToolNotFoundError('x') instanceof copy.ToolsError).toBe(true)
    expect(new copy.ToolNotFoundError('x') instanceof ToolNotFoundError).toBe(false)
    expect(new ToolNotFoundError('x') instanceof copy.ToolNotFoundError).toBe(false)
    expect(new ToolNotFoundError('x') instanceof ToolArgsError).toBe(false)
  })

  it('the base check is the brand: an object carrying it is an instance, one without it is not', () => {
    const branded: unknown = Object.create(null, { [brand]: { value: true } })
    expect(branded instanceof ToolsError).toBe(true)
    expect(branded instanceof ToolNotFoundError).toBe(false)
    expect(Object.create(null, { [brand]: { value: 'true' } }) instanceof ToolsError).toBe(false)
    expect(Object.assign(new Error('x'), { code: 'TOOL_ERROR', name: 'ToolsError' }) instanceof ToolsError).toBe(false)
  })

  it('never throws: hostile and revoked proxies are not instances', () => {
    for (const value of hostileValues()) {
      expect(() => value instanceof ToolsError).not.toThrow()
      expect(value instanceof ToolsError).toBe(false)
      expect(value instanceof ToolNotFoundError).toBe(false)
      expect(value instanceof ToolTimeoutError).toBe(false)
    }
  })

  it('plain objects, null and primitives are not instances', () => {
    for (const value of [{}, { code: 'TOOL_ERROR' }, [], null, undefined, 0, 'ToolsError', true, Symbol('x'), 1n, () => undefined, new Error('x')]) {
      expect(value instanceof ToolsError).toBe(false)
      expect(value instanceof ToolNotFoundError).toBe(false)
    }
  })
})
