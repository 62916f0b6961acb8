import { describe, expect, it } from 'vitest'
import { brandedErrorChecks } from '../../../test/support/branded-error.js'
import { thrownBy } from '../../../test/support/thrown.js'
import * as errors from './errors.js'
import { McpError, McpServeUsageError, UpstreamToolError, UpstreamUnavailableError } from './errors.js'
import { parseUpstreamCommand } from './upstream/command-line.js'
import { parseServeArgs } from './serve-args.js'

describe('McpError and its subclasses', () => {
  it('have a stable code, the class name as name, and the message', () => {
    const usage = new McpServeUsageError('--mode must be code or both')
    expect([usage.code, usage.name, usage.message]).toEqual([
      'MCP_SERVE_USAGE',
      'McpServeUsageError',
      '--mode must be code or both',
    ])
    const down = new UpstreamUnavailableError('fs', 'upstream fs is closed')
    expect([down.code, down.name, down.upstream, down.message]).toEqual([
      'UPSTREAM_UNAVAILABLE',
      'UpstreamUnavailableError',
      'fs',
      'upstream fs is closed',
    ])
    const failed = new UpstreamToolError('no such file')
    expect([failed.code, failed.name, failed.message]).toEqual([
      'UPSTREAM_TOOL_ERROR',
      'UpstreamToolError',
      'no such file',
    ])
    const base = new McpError('UPSTREAM_UNAVAILABLE', 'x')
    expect([base.code, base.name]).toEqual(['UPSTREAM_UNAVAILABLE', 'McpError'])
    for (const e of [usage, down, failed, base]) expect(e instanceof Error && e instanceof McpError).toBe(true)
    // As Error's constructor: the message may be left out.
    expect(new McpServeUsageError().message).toBe('')
  })

  it('the package throws them with their codes', () => {
    expect(thrownBy(() => parseUpstreamCommand("fs=echo 'open"))).toMatchObject({
      name: 'McpServeUsageError',
      code: 'MCP_SERVE_USAGE',
    })
    const error = thrownBy(() => parseServeArgs(['--upstream', 'fs=echo', '--mode', 'neither'], {}))
    expect(error instanceof McpServeUsageError && error instanceof McpError).toBe(true)
    expect(error).toMatchObject({
      code: 'MCP_SERVE_USAGE',
      message: expect.stringContaining('--mode must be code or both') as unknown,
    })
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

  brandedErrorChecks({
    base: McpError,
    sub: McpServeUsageError,
    brand: '@ptc/mcp.error',
    code: 'MCP_SERVE_USAGE',
    make: () => new McpError('MCP_SERVE_USAGE', 'x'),
    makeSub: () => new McpServeUsageError('x'),
    secondCopy: async () => {
      const copy = (await import(/* @vite-ignore */ new URL('./errors.ts?copy', import.meta.url).href)) as typeof errors
      return { base: copy.McpError, instance: new copy.McpError('MCP_SERVE_USAGE', 'x') }
    },
  })
})
