/**
 * `ask` over MCP: a call a policy sends for approval is asked of the client that made it, through
 * elicitation, when that client supports it; otherwise it is denied. In process, with the SDK's client.
 */
import type { CodeRuntime } from '@ptc/sandbox'
import { createQuickJSRuntime } from '@ptc/sandbox-quickjs'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { createPtcMcpServer, type PtcMcpServer } from '@ptc/mcp'
import { connectInMemory, inMemoryFixture, type CallToolResult, type ElicitAnswer } from '@ptc/mcp/testing'
import { INITIALIZE, mcpHeaders, post, serve } from './http-helpers.js'

let runtime: CodeRuntime
beforeAll(() => {
  runtime = createQuickJSRuntime({ poolSize: 1 })
})
afterAll(async () => {
  await runtime.dispose()
})

/** A server whose policy asks before every fx.echo call. */
async function asking(): Promise<PtcMcpServer> {
  const ptc = await createPtcMcpServer({
    upstreams: [{ name: 'fx', transport: inMemoryFixture() }],
    runtime,
    onWarning: () => undefined,
  })
  ptc.tools.on('tools/pre-execute', (exec, next) =>
    exec.name === 'fx.echo' ? { kind: 'ask', reason: 'echo needs a yes' } : next(),
  )
  return ptc
}

const program =
  'try { return await tools["fx.echo"]({ text: "approved" }) } catch (e) { return e.code + ": " + e.message }'
const run = async (ptc: PtcMcpServer, elicit?: (message: string) => ElicitAnswer): Promise<unknown> => {
  const client = await connectInMemory(ptc, elicit === undefined ? {} : { elicit })
  try {
    const result = (await client.callTool({
      name: 'run_code',
      arguments: { code: program, description: 'ask' },
    })) as CallToolResult
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

  test('an answered elicitation is not cancelled when the program ends', async () => {
    await using ptc = await asking()
    const client = await connectInMemory(ptc, { elicit: () => ({ action: 'accept', content: { allow: true } }) })
    const received: string[] = []
    const transport = client.transport as NonNullable<typeof client.transport>
    const deliver = transport.onmessage
    transport.onmessage = (message, extra) => {
      if ('method' in message) received.push(message.method)
      deliver?.(message, extra)
    }
    const result = (await client.callTool({
      name: 'run_code',
      arguments: { code: program, description: 'ask' },
    })) as CallToolResult
    expect((result.structuredContent as { result?: unknown }).result).toBe('approved')
    await new Promise((resolve) => setImmediate(resolve))
    expect(received).toContain('elicitation/create')
    expect(received).not.toContain('notifications/cancelled')
    await client.close()
  })

  test('a client without elicitation is never asked: the call is denied', async () => {
    await using ptc = await asking()
    expect(await run(ptc)).toMatch(/^DENIED: /)
  })

  test('over Streamable HTTP, the question goes on the stream of the call that asks it: a client that opens no other stream is asked, and its answer lets the call run', async () => {
    await using served = await serve(runtime)
    served.ptc.tools.on('tools/pre-execute', (exec, next) =>
      exec.name === 'fx.echo' ? { kind: 'ask', reason: 'echo needs a yes' } : next(),
    )
    const { endpoint, bearer } = served
    const init = await post(
      endpoint.url,
      { ...INITIALIZE, params: { ...INITIALIZE.params, capabilities: { elicitation: {} } } },
      mcpHeaders({ authorization: bearer }),
    )
    const headers = mcpHeaders({
      authorization: bearer,
      'mcp-session-id': init.headers.get('mcp-session-id') ?? '',
      'mcp-protocol-version': '2025-06-18',
    })
    expect((await post(endpoint.url, { jsonrpc: '2.0', method: 'notifications/initialized' }, headers)).status).toBe(
      202,
    )
    const call = await fetch(endpoint.url, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { name: 'run_code', arguments: { code: program, description: 'ask' } },
      }),
    })
    expect(call.status).toBe(200)
    // The call's own event stream: the question, then (once answered) the call's result.
    const reader = (call.body as ReadableStream<Uint8Array>).pipeThrough(new TextDecoderStream()).getReader()
    let buffered = ''
    const nextMessage = async (): Promise<{
      id?: unknown
      method?: string
      params?: { message?: string }
      result?: CallToolResult
    }> => {
      for (;;) {
        const data = /^data: (.*)$/m.exec(buffered)
        if (data !== null) {
          buffered = buffered.slice(data.index + data[0].length)
          return JSON.parse(data[1] as string) as { id?: unknown; method?: string }
        }
        const chunk = await reader.read()
        if (chunk.done) throw new Error("the call's stream ended without a message")
        buffered += chunk.value
      }
    }
    const question = await nextMessage()
    expect(question).toMatchObject({
      method: 'elicitation/create',
      params: { message: expect.stringMatching(/^Allow the call of fx\.echo/) },
    })
    expect(
      (
        await post(
          endpoint.url,
          { jsonrpc: '2.0', id: question.id, result: { action: 'accept', content: { allow: true } } },
          headers,
        )
      ).status,
    ).toBe(202)
    // (Notifications may come first: the SDK says the question is cancelled once the run's signal aborts at its end.)
    let answer = await nextMessage()
    while (answer.id === undefined) answer = await nextMessage()
    expect(answer).toMatchObject({ id: 2, result: { structuredContent: { result: 'approved' } } })
    await reader.cancel()
  }, 30_000)
})
