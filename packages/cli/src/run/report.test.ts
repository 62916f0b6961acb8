import { describe, expect, test } from 'vitest'
import { renderLine } from '../colour.js'
import type { SubCallRecord } from '../demo/report.js'
import { byteSummary, formatFooter, type RunReport } from './report.js'

const failed = { kind: 'exception', message: 'boom' }
const summary = (inSandbox: number, toModel: number, subCalls = 1, error: RunReport['error'] = null): string =>
  byteSummary({ bytes: { inSandbox, toModel }, error }, subCalls)

describe('byteSummary', () => {
  test('the share of what the tools returned, when the model read at most that', () => {
    expect(summary(12_000, 300)).toBe(
      'bytes of tool results that stayed in the sandbox: 12000; bytes that reached the model: 300 (3% of what the tools returned)',
    )
    expect(summary(300, 300)).toMatch(/\(100% of what the tools returned\)$/)
  })

  test('past 100%: no share, the difference in bytes and why (the program’s own text)', () => {
    const text = summary(2, 15)
    expect(text).not.toMatch(/\d+%/)
    expect(text).toBe(
      "bytes of tool results that stayed in the sandbox: 2; bytes that reached the model: 15 (13 more than the tools returned: the model reads what the program logged and returned (a value as indented JSON), the program's own text, not a share of the tool results)",
    )
  })

  test('a failed run: the error message and the captured logs are why', () => {
    const text = summary(14, 75, 1, failed)
    expect(text).not.toMatch(/\d+%/)
    expect(text).toMatch(
      /\(61 more than the tools returned: the model reads the error message and the logs captured before it/,
    )
  })

  test('no tool called: all of the text is the program’s own; nothing at all: just the figures', () => {
    expect(summary(0, 40, 0)).toMatch(
      /reached the model: 40 \(no tool was called: all of it is what the program logged and returned/,
    )
    expect(summary(0, 0, 0)).toBe(
      'bytes of tool results that stayed in the sandbox: 0; bytes that reached the model: 0',
    )
  })
})

describe('formatFooter', () => {
  const call = (over: Partial<SubCallRecord>): SubCallRecord => ({
    subCallId: 'c:ptc:1',
    parentCallId: 'c',
    name: 'add',
    arguments: {},
    startedAt: 10,
    settledAt: 14,
    isError: false,
    code: undefined,
    errorMessage: undefined,
    contentBytes: 1,
    ...over,
  })
  const report = (error: RunReport['error']): RunReport => ({
    ok: error === null,
    text: '',
    value: null,
    logs: [],
    error,
    subCalls: [],
    bytes: { inSandbox: 2, toModel: 40 },
    sandbox: 'quickjs',
    wallMs: 5,
  })

  test('each outcome in its colour; the failure line red; plain without colour', () => {
    const calls = [
      call({}),
      call({ subCallId: 'c:ptc:2', isError: true, code: 'TOOL_ERROR', errorMessage: 'no\nway' }),
      call({ subCallId: 'c:ptc:3', settledAt: undefined }),
    ]
    const lines = formatFooter(report(failed), calls).map((line) => renderLine(line, true))
    expect(lines[0]).toBe('ptc: 3 sub-calls (quickjs, run 5 ms)')
    expect(lines[1]).toBe('  c:ptc:1  add     4 ms       1 B  \x1b[32mok\x1b[39m')
    expect(lines[2]?.endsWith('  \x1b[31merror TOOL_ERROR: no ⏎ way\x1b[39m')).toBe(true)
    expect(lines[3]).toBe('  c:ptc:3  add        ?       1 B  \x1b[33mnever settled\x1b[39m')
    expect(lines[4]).toMatch(
      /^ptc: bytes of tool results .*: 2; .*: 40 \(38 more than the tools returned: the model reads the error message/,
    )
    expect(lines[5]).toBe('\x1b[31mptc: the program failed (exception): boom\x1b[39m')
    expect(
      formatFooter(report(failed), calls)
        .map((line) => renderLine(line, false))
        .join('\n'),
    ).not.toContain('\x1b')
  })

  test('a deferred call waits for approval only when the program suspended; else it says the call did not run', () => {
    const deferred = [call({ isError: true, code: 'APPROVAL_DEFERRED', errorMessage: 'deferred' })]
    expect(renderLine(formatFooter(report(null), deferred, true)[1] ?? [], false)).toMatch(
      / waits for approval \(the program suspended here\)$/,
    )
    expect(renderLine(formatFooter(report(failed), deferred, false)[1] ?? [], false)).toMatch(
      / deferred, but the program ended before it could suspend: the call did not run$/,
    )
  })
})
