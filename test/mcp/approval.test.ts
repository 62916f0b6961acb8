/**
 * `ask` over MCP: a call a policy sends for approval is asked of the client that made it, through
 * elicitation, when that client supports it; otherwise it is denied. In process, with the SDK's client.
 */
import type { CodeRuntime } from '@ptc/sandbox'
import { createQuickJSRuntime } from '@ptc/sandbox-quickjs'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { createPtcMcpServer, type PtcMcpServer } from '@ptc/mcp'
import { connectInMemory, inMemoryFixture, type CallToolResult, type ElicitAnswer } from '@ptc/mcp/testing'

let runtime: CodeRuntime
beforeAll(() => {
  runtime = createQuickJSRuntime({ poolSize: 1 })
})
afterAll(async () => {
  await runtime.dispose()
})

/** A server whose policy asks before every fx.echo call. */
async function asking(): Promise<PtcMcpServer> {
  const ptc = await createPtcMcpServer({ upstreams: [{ name: 'fx', transport: inMemoryFixture() }], runtime, onWarning: () => undefined })
  ptc.tools.on('tools/pre-execute', (exec, next) => (exec.name === 'fx.echo' ? { kind: 'ask', reason: 'echo needs a yes' } : next()))
  return ptc
}

const program = 'try { return await tools["fx.echo"]({ text: "approved" }) } catch (e) { return e.code + ": " + e.message }'
const run = async (ptc: PtcMcpServer, elicit?: (message: string) => ElicitAnswer): Promise<unknown> => {
  const client = await connectInMemory(ptc, elicit === undefined ? {} : { elicit })
  try {
    const result = (await client.callTool({ name: 'run_code', arguments: { code: program, description: 'ask' } })) as CallToolResult
    return (result.structuredContent as { result?: unknown } | undefined)?.result
  } finally {
    await client.close()
  }
}

describe('approval over MCP elicitation', () => {
  test('the calling client is asked, with the tool, the sub-call id and the reason; its yes lets the call run', async () => {
    await using ptc = await asking()
    const asked: string[] = []
    const result = await run(ptc, (message) => (asked.push(message), { action: 'accept', content: { allow: true } }))
    expect(result).toBe('approved')
    expect(asked).toEqual([expect.stringMatching(/^Allow the call of fx\.echo \(mcp-\d+:ptc:1\): echo needs a yes\?$/)])
  })

  test.each<[string, ElicitAnswer]>([
    ['an unticked box', { action: 'accept', content: { allow: false } }],
    ['a decline', { action: 'decline' }],
    ['a cancel', { action: 'cancel' }],
  ])('%s denies the call inside the program', async (_what, answer) => {
    await using ptc = await asking()
    expect(await run(ptc, () => answer)).toMatch(/^DENIED: /)
  })

  test('a client without elicitation is never asked: the call is denied', async () => {
    await using ptc = await asking()
    expect(await run(ptc)).toMatch(/^DENIED: /)
  })
})
