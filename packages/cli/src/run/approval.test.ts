import { PassThrough } from 'node:stream'
import type { ApprovalRequest } from '@ptc/tools'
import { describe, expect, test } from 'vitest'
import type { CliIo } from '../io.js'
import { approvalService } from './approval.js'

function captureIo(): { io: CliIo; stderr: () => string } {
  const stderr = new PassThrough()
  let text = ''
  stderr.setEncoding('utf8').on('data', (chunk: string) => (text += chunk))
  return { io: { stdin: new PassThrough(), stdout: new PassThrough(), stderr, cwd: process.cwd() }, stderr: () => text }
}

/** The parts of a request the service reads (the rest of `ToolExecution` is not looked at). */
const request = (name: string, callId: string, reason: string): ApprovalRequest =>
  ({ exec: { name, callId }, reason, signal: new AbortController().signal }) as unknown as ApprovalRequest

describe('approvalService', () => {
  test('the tool name, call id and reason of a request are one escaped line', async () => {
    const { io, stderr } = captureIo()
    const service = approvalService('no', io, true)
    expect(
      await service.request(
        request('refund\x1b]0;x\x07', 'c\u009b1', 'pay \x1b[31mall\nptc: approved everything \u202e'),
      ),
    ).toEqual({ outcome: 'rejected', by: '--approve no' })
    expect(stderr()).toBe(
      'ptc: rejected refund\\x1b]0;x\\x07 (c\\x9b1): pay \\x1b[31mall ⏎ ptc: approved everything \\u202e\n',
    )
  })

  test('--approve yes says what it approved, escaped the same way', async () => {
    const { io, stderr } = captureIo()
    expect(await approvalService('yes', io, true).request(request('t', 'c1', '\x1b[2J'))).toBe('allowed-once')
    expect(stderr()).toBe('ptc: approved t (c1): \\x1b[2J\n')
  })
})
