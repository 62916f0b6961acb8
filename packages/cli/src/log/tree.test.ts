import { describe, expect, test } from 'vitest'
import type { SessionEvent } from '@ptc/tools'
import { logTreeJson, renderLogTree } from './render.js'
import { buildLogTree } from './tree.js'

const text = (t: string): unknown => [{ type: 'text', text: t }]
const failure = (code: string): unknown => ({ message: code, info: { name: 'ToolsError', code } })

describe('ptc log tree', () => {
  test('an abandoned sub-call says so, and what its body did later; one never settled says that', () => {
    const events: SessionEvent[] = [
      {
        type: 'tool/call',
        time: 1000,
        callId: 'r1',
        name: 'run_code',
        arguments: '{"code":"…","description":"stuck tools"}',
      },
      {
        type: 'tool/ptc-dispatch-start',
        time: 1001,
        rootCallId: 'r1',
        parentCallId: 'r1',
        subCallId: 'r1:ptc:1',
        name: 'slow',
        arguments: {},
      },
      {
        type: 'tool/ptc-dispatch-start',
        time: 1002,
        rootCallId: 'r1',
        parentCallId: 'r1',
        subCallId: 'r1:ptc:2',
        name: 'stuck',
        arguments: {},
      },
      {
        type: 'tool/ptc-dispatch',
        time: 1400,
        rootCallId: 'r1',
        parentCallId: 'r1',
        subCallId: 'r1:ptc:1',
        name: 'slow',
        isError: true,
        content: text('Error: timed out'),
        error: failure('TOOL_TIMEOUT'),
        abandoned: true,
      },
      {
        type: 'tool/ptc-dispatch',
        time: 1400,
        rootCallId: 'r1',
        parentCallId: 'r1',
        subCallId: 'r1:ptc:2',
        name: 'stuck',
        isError: true,
        content: text('Error: aborted'),
        error: failure('ABORTED'),
        abandoned: true,
      },
      {
        type: 'tool/result',
        time: 1401,
        callId: 'r1',
        name: 'run_code',
        isError: true,
        content: text('Error: code run failed'),
        error: failure('CODE_RUN_FAILED'),
      },
      {
        type: 'tool/ptc-dispatch-late',
        time: 3001,
        rootCallId: 'r1',
        parentCallId: 'r1',
        subCallId: 'r1:ptc:1',
        name: 'slow',
        isError: false,
        content: text('done'),
      },
      { type: 'tool/call', time: 4000, callId: 'n1', name: 'fetch', arguments: '{}' },
      {
        type: 'tool/result',
        time: 4150,
        callId: 'n1',
        name: 'fetch',
        isError: true,
        content: text('Error: timed out'),
        error: failure('TOOL_TIMEOUT'),
        abandoned: true,
      },
      {
        type: 'tool/result-late',
        time: 9000,
        callId: 'n1',
        name: 'fetch',
        isError: true,
        content: text('Error: boom'),
        error: failure('TOOL_ERROR'),
      },
    ]
    const roots = buildLogTree(events)
    const lines = renderLogTree(roots)
    expect(lines[1]).toMatch(
      /r1:ptc:1 slow\(\{\}\) — .* — error TOOL_TIMEOUT .* — abandoned; its body settled later after 2000 ms: ok$/,
    )
    expect(lines[2]).toMatch(
      /r1:ptc:2 stuck\(\{\}\) — .* — error ABORTED .* — abandoned; its body never settled in this log$/,
    )
    expect(lines.find((l) => l.startsWith('fetch n1'))).toMatch(
      /abandoned; its body settled later after 5000 ms: error TOOL_ERROR$/,
    )
    const json = logTreeJson(roots) as {
      subCalls: { abandoned: boolean; late: unknown }[]
      abandoned: boolean
      late: unknown
    }[]
    expect(json[0]?.subCalls.map((c) => [c.abandoned, c.late])).toEqual([
      [true, { ms: 2000, isError: false, code: null }],
      [true, null],
    ])
    expect(json[1]).toMatchObject({ abandoned: true, late: { ms: 5000, isError: true, code: 'TOOL_ERROR' } })
    expect(json[0]).toMatchObject({ abandoned: false, late: null })
  })

  test('values the log did not keep whole (a run past its logLimits) show what they weighed, in the tree and the JSON', () => {
    const ids = { rootCallId: 'r1', parentCallId: 'r1' }
    const sha256 = 'a'.repeat(64)
    const events: SessionEvent[] = [
      {
        type: 'tool/call',
        time: 1000,
        callId: 'r1',
        name: 'run_code',
        arguments: '{"code":"…","description":"large"}',
      },
      {
        type: 'tool/ptc-dispatch-start',
        time: 1001,
        ...ids,
        subCallId: 'r1:ptc:1',
        name: 'sink',
        arguments: '{"text":"xxxx…',
        elided: { arguments: { bytes: 4_194_315, sha256 } },
      },
      {
        type: 'tool/ptc-dispatch',
        time: 1002,
        ...ids,
        subCallId: 'r1:ptc:1',
        name: 'sink',
        isError: false,
        content: text('"wwww…'),
        elided: { content: { bytes: 2_097_152, sha256 } },
      },
      { type: 'tool/result', time: 1003, callId: 'r1', name: 'run_code', isError: false, content: text('1') },
    ]
    const roots = buildLogTree(events)
    const lines = renderLogTree(roots)
    expect(lines[1]).toMatch(
      /r1:ptc:1 sink\(\{"text":"xxxx…\) \[arguments 4\.19 MB, not logged whole\] — 1 ms — ok \(2\.10 MB, not logged whole\): "wwww…$/,
    )
    expect(lines.at(-1)).toMatch(/2\.10 MB of tool results stayed in the sandbox/)
    expect(logTreeJson(roots)[0]).toMatchObject({
      subCalls: [{ bytes: 2_097_152, argumentsElided: 4_194_315, resultElided: true }],
    })
  })

  test('a program that suspended awaiting approval and was resumed: both in place among its sub-calls', () => {
    const ids = { rootCallId: 'r1', parentCallId: 'r1' }
    const events: SessionEvent[] = [
      {
        type: 'tool/call',
        time: 1000,
        callId: 'r1',
        name: 'run_code',
        arguments: '{"code":"…","description":"refund"}',
      },
      {
        type: 'tool/ptc-dispatch-start',
        time: 1001,
        ...ids,
        subCallId: 'r1:ptc:1',
        name: 'refund',
        arguments: { order: 'A' },
      },
      {
        type: 'tool/ptc-dispatch',
        time: 1002,
        ...ids,
        subCallId: 'r1:ptc:1',
        name: 'refund',
        isError: true,
        content: text('Error: deferred'),
        error: failure('APPROVAL_DEFERRED'),
      },
      {
        type: 'tool/ptc-suspend',
        time: 1003,
        ...ids,
        token: 'tok-1',
        awaiting: [{ name: 'refund', arguments: { order: 'A' }, reason: 'money' }],
      },
      { type: 'tool/result', time: 1004, callId: 'r1', name: 'run_code', isError: false, content: text('(waiting)') },
      { type: 'tool/ptc-resume', time: 9000, ...ids, token: 'tok-1', decisions: ['rejected'] },
      {
        type: 'tool/ptc-dispatch-start',
        time: 9001,
        ...ids,
        subCallId: 'r1:ptc:2',
        name: 'refund',
        arguments: { order: 'A' },
      },
      {
        type: 'tool/ptc-dispatch',
        time: 9002,
        ...ids,
        subCallId: 'r1:ptc:2',
        name: 'refund',
        isError: true,
        content: text('Error: rejected'),
        error: failure('DENIED'),
      },
      {
        type: 'tool/result',
        time: 9003,
        callId: 'r1',
        name: 'run_code',
        isError: false,
        content: text('gave up'),
        resumed: true,
      },
    ]
    const roots = buildLogTree(events)
    const lines = renderLogTree(roots)
    expect(lines).toHaveLength(6)
    expect(lines[0]).toMatch(/^run_code r1 "refund" — .* — ok .*: gave up$/)
    expect(lines[1]).toMatch(/├─ r1:ptc:1 refund\(\{"order":"A"\}\) — .* — error APPROVAL_DEFERRED/)
    expect(lines[2]).toBe('  ‖ suspended awaiting approval of refund({"order":"A"}) (money) — token tok-1')
    expect(lines[3]).toBe('  ‖ resumed (rejected) — token tok-1')
    expect(lines[4]).toMatch(/└─ r1:ptc:2 refund.* — error DENIED/)
    expect((logTreeJson(roots)[0] as { pauses: unknown }).pauses).toEqual([
      { kind: 'suspend', token: 'tok-1', after: 1, detail: ['refund({"order":"A"}) (money)'] },
      { kind: 'resume', token: 'tok-1', after: 1, detail: ['rejected'] },
    ])
  })
})
