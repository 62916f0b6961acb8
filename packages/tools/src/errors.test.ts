import { describe, expect, it } from 'vitest'
import { brandedErrorChecks } from '../../../test/support/branded-error.js'
import * as errors from './errors.js'
import {
  SessionError,
  ToolAbortedError,
  ToolArgsError,
  ToolExecutionError,
  ToolNotFoundError,
  ToolsError,
  ToolTimeoutError,
} from './errors.js'

describe('ToolsError', () => {
  it('has a stable code, the class name as name, and the message', () => {
    const e = new ToolsError('NOT_JSON', 'bad value')
    expect(e).toBeInstanceOf(Error)
    expect([e.code, e.name, e.message]).toEqual(['NOT_JSON', 'ToolsError', 'bad value'])
    const found = new ToolNotFoundError('lookup')
    expect([found.code, found.name, found.message, found.toolName]).toEqual([
      'UNKNOWN_TOOL',
      'ToolNotFoundError',
      'unknown tool: lookup',
      'lookup',
    ])
    expect([new ToolTimeoutError(50).code, new ToolTimeoutError(50).name]).toEqual(['TOOL_TIMEOUT', 'ToolTimeoutError'])
    expect(new ToolAbortedError('ABORTED_BEFORE_DISPATCH', 'stop').code).toBe('ABORTED_BEFORE_DISPATCH')
    expect([
      new SessionError('SESSION_CLOSED', 'closed').code,
      new SessionError('SESSION_CLOSED', 'closed').name,
    ]).toEqual(['SESSION_CLOSED', 'SessionError'])
  })

  it('keeps the cause it wraps, and has none otherwise', () => {
    const cause = new RangeError('inner')
    expect(new ToolsError('TOOL_ERROR', 'outer', { cause }).cause).toBe(cause)
    expect(new ToolExecutionError('outer', { cause }).cause).toBe(cause)
    expect(new ToolArgsError('bad', [], { cause: 'text' }).cause).toBe('text')
    expect('cause' in new ToolsError('TOOL_ERROR', 'outer')).toBe(false)
  })

  brandedErrorChecks({
    base: ToolsError,
    sub: ToolNotFoundError,
    brand: '@ptc/tools.error',
    code: 'TOOL_ERROR',
    make: () => new ToolsError('TOOL_ERROR', 'x'),
    makeSub: () => new ToolNotFoundError('x'),
    secondCopy: async () => {
      const copy = (await import(/* @vite-ignore */ new URL('./errors.ts?copy', import.meta.url).href)) as typeof errors
      return { base: copy.ToolsError, instance: new copy.ToolsError('TOOL_ERROR', 'x') }
    },
  })
})
