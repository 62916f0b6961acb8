import { describe, expect, it } from 'vitest'
import * as errors from './errors.js'
import { McpError, McpServeUsageError, UpstreamToolError, UpstreamUnavailableError } from './errors.js'
import { parseUpstreamCommand } from './upstream/command-line.js'
import { parseServeArgs } from './serve-args.js'

const brand = Symbol.for('@ptc/mcp.error')

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
  const revocable = Proxy.revocable(new McpServeUsageError('x'), {})
  revocable.revoke()
  return [new Proxy({}, traps), new Proxy(new UpstreamUnavailableError('fs', 'x'), traps), revocable.proxy]
}

function thrownBy(f: () => unknown): unknown {
  try {
    f()
  } catch (error) {
    return error
  }
  throw new Error('did not throw')
}

describe('McpError and its subclasses', () => {
  it('have a stable code, the class name as name, and the message', () => {
    const usage = new McpServeUsageError('--mode must be code or both')
    expect([usage.code, usage.name, usage.message]).toEqual(['MCP_SERVE_USAGE', 'McpServeUsageError', '--mode must be code or both'])
    const down = new UpstreamUnavailableError('fs', 'upstream fs is closed')
    expect([down.code, down.name, down.upstream, down.message]).toEqual(['UPSTREAM_UNAVAILABLE', 'UpstreamUnavailableError', 'fs', 'upstream fs is closed'])
    const failed = new UpstreamToolError('no such file')
    expect([failed.code, failed.name, failed.message]).toEqual(['UPSTREAM_TOOL_ERROR', 'UpstreamToolError', 'no such file'])
    const base = new McpError('UPSTREAM_UNAVAILABLE', 'x')
    expect([base.code, base.name]).toEqual(['UPSTREAM_UNAVAILABLE', 'McpError'])
    for (const e of [usage, down, failed, base]) expect(e instanceof Error && e instanceof McpError).toBe(true)
    // As Error's constructor: the message may be left out.
    expect(new McpServeUsageError().message).toBe('')
  })

  it('the package throws them with their codes', () => {
    expect(thrownBy(() => parseUpstreamCommand("fs=echo 'open"))).toMatchObject({ name: 'McpServeUsageError', code: 'MCP_SERVE_USAGE' })
    const error = thrownBy(() => parseServeArgs(['--upstream', 'fs=echo', '--mode', 'neither'], {}))
    expect(error instanceof McpServeUsageError && error instanceof McpError).toBe(true)
    expect(error).toMatchObject({ code: 'MCP_SERVE_USAGE', message: expect.stringContaining('--mode must be code or both') as unknown })
  })

  it('keep the cause they wrap, and have none otherwise', () => {
    const cause = new Error('ECONNREFUSED')
    expect(new UpstreamUnavailableError('fs', 'could not be connected', { cause }).cause).toBe(cause)
    expect(new McpServeUsageError('bad', { cause }).cause).toBe(cause)
    expect(new UpstreamToolError('bad', { cause }).cause).toBe(cause)
    expect(new McpError('MCP_SERVE_USAGE', 'bad', { cause }).cause).toBe(cause)
    expect('cause' in new UpstreamUnavailableError('fs', 'closed')).toBe(false)
    expect('cause' in new McpServeUsageError('bad')).toBe(false)
  })

  it('instanceof McpError holds across two copies of the module; a subclass checks the prototype', async () => {
    const copy = await secondCopy()
    expect(copy.McpError).not.toBe(McpError)
    expect(new copy.McpServeUsageError('x') instanceof McpError).toBe(true)
    expect(new copy.UpstreamUnavailableError('fs', 'x') instanceof McpError).toBe(true)
    expect(new UpstreamToolError('x') instanceof copy.McpError).toBe(true)
    expect(new copy.McpServeUsageError('x') instanceof McpServeUsageError).toBe(false)
    expect(new McpServeUsageError('x') instanceof UpstreamUnavailableError).toBe(false)
    expect(new UpstreamUnavailableError('fs', 'x') instanceof UpstreamUnavailableError).toBe(true)
  })

  it('the base check is the brand: an object carrying it is an instance, one without it is not', () => {
    expect(Object.create(null, { [brand]: { value: true } }) instanceof McpError).toBe(true)
    expect(Object.create(null, { [brand]: { value: true } }) instanceof McpServeUsageError).toBe(false)
    expect(Object.create(null, { [Symbol.for('@ptc/tools.error')]: { value: true } }) instanceof McpError).toBe(false)
    expect(Object.assign(new Error('x'), { name: 'McpServeUsageError', code: 'MCP_SERVE_USAGE' }) instanceof McpError).toBe(false)
  })

  it('never throws: hostile and revoked proxies are not instances', () => {
    for (const value of hostileValues()) {
      expect(() => value instanceof McpError).not.toThrow()
      expect(value instanceof McpError).toBe(false)
      expect(value instanceof McpServeUsageError).toBe(false)
      expect(value instanceof UpstreamUnavailableError).toBe(false)
    }
  })

  it('plain objects, null and primitives are not instances', () => {
    for (const value of [{}, { code: 'MCP_SERVE_USAGE' }, [], null, undefined, 0, 'McpError', true, Symbol('x'), 1n, () => undefined, new Error('x')]) {
      expect(value instanceof McpError).toBe(false)
      expect(value instanceof McpServeUsageError).toBe(false)
      expect(value instanceof UpstreamUnavailableError).toBe(false)
    }
  })
})
