import { describe, expect, test } from 'vitest'
import type { SessionEvent } from '@ptc/tools'
import { logTreeJson, renderLogTree } from './render.js'
import { buildLogTree } from './tree.js'

const text = (t: string): unknown => [{ type: 'text', text: t }]
const failure = (code: string): unknown => ({ message: code, info: { name: 'ToolsError', code } })

describe('ptc log tree', () => {
  test('an abandoned sub-call says so, and what its body did later; one never settled says that', () => {
    const events: SessionEvent[] = [
      { type: 'tool/call', time: 1000, callId: 'r1', name: 'run_code', arguments: '{"code":"…","description":"stuck tools"}' },
      { type: 'tool/ptc-dispatch-start', time: 1001, rootCallId: 'r1', parentCallId: 'r1', subCallId: 'r1:ptc:1', name: 'slow', arguments: {} },
      { type: 'tool/ptc-dispatch-start', time: 1002, rootCallId: 'r1', parentCallId: 'r1', subCallId: 'r1:ptc:2', name: 'stuck', arguments: {} },
      { type: 'tool/ptc-dispatch', time: 1400, rootCallId: 'r1', parentCallId: 'r1', subCallId: 'r1:ptc:1', name: 'slow', isError: true, content: text('Error: timed out'), error: failure('TOOL_TIMEOUT'), abandoned: true },
      { type: 'tool/ptc-dispatch', time: 1400, rootCallId: 'r1', parentCallId: 'r1', subCallId: 'r1:ptc:2', name: 'stuck', isError: true, content: text('Error: aborted'), error: failure('ABORTED'), abandoned: true },
      { type: 'tool/result', time: 1401, callId: 'r1', name: 'run_code', isError: true, content: text('Error: code run failed'), error: failure('CODE_RUN_FAILED') },
      { type: 'tool/ptc-dispatch-late', time: 3001, rootCallId: 'r1', parentCallId: 'r1', subCallId: 'r1:ptc:1', name: 'slow', isError: false, content: text('done') },
      { type: 'tool/call', time: 4000, callId: 'n1', name: 'fetch', arguments: '{}' },
      { type: 'tool/result', time: 4150, callId: 'n1', name: 'fetch', isError: true, content: text('Error: timed out'), error: failure('TOOL_TIMEOUT'), abandoned: true },
      { type: 'tool/result-late', time: 9000, callId: 'n1', name: 'fetch', isError: true, content: text('Error: boom'), error: failure('TOOL_ERROR') },
    ]
    const roots = buildLogTree(events)
    const lines = renderLogTree(roots)
    expect(lines[1]).toMatch(/r1:ptc:1 slow\(\{\}\) — .* — error TOOL_TIMEOUT .* — abandoned; its body settled later after 2000 ms: ok$/)
    expect(lines[2]).toMatch(/r1:ptc:2 stuck\(\{\}\) — .* — error ABORTED .* — abandoned; its body never settled in this log$/)
    expect(lines.find((l) => l.startsWith('fetch n1'))).toMatch(/abandoned; its body settled later after 5000 ms: error TOOL_ERROR$/)
    const json = logTreeJson(roots) as { subCalls: { abandoned: boolean; late: unknown }[]; abandoned: boolean; late: unknown }[]
    expect(json[0]?.subCalls.map((c) => [c.abandoned, c.late])).toEqual([
      [true, { ms: 2000, isError: false, code: null }],
      [true, null],
    ])
    expect(json[1]).toMatchObject({ abandoned: true, late: { ms: 5000, isError: true, code: 'TOOL_ERROR' } })
    expect(json[0]).toMatchObject({ abandoned: false, late: null })
  })
})
