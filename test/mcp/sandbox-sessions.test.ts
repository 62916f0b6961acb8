/**
 * `ptc serve --sandbox-sessions`: each client connection (MCP session) gets its own sandbox session; it
 * ends when the client disconnects. In process, with the SDK's client.
 */
import type { CodeRuntime } from '@ptc/sandbox'
import { createQuickJSRuntime } from '@ptc/sandbox-quickjs'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { createPtcMcpServer, parseServeArgs } from '@ptc/mcp'
import { connectInMemory, inMemoryFixture, type CallToolResult } from '@ptc/mcp/testing'

let runtime: CodeRuntime
beforeAll(() => {
  runtime = createQuickJSRuntime({ poolSize: 1 })
})
afterAll(async () => {
  await runtime.dispose()
})

type Client = Awaited<ReturnType<typeof connectInMemory>>
const run = async (client: Client, code: string): Promise<unknown> => {
  const result = (await client.callTool({
    name: 'run_code',
    arguments: { code, description: 'session' },
  })) as CallToolResult
  expect(result.isError ?? false).toBe(false)
  return (result.structuredContent as { result?: unknown } | undefined)?.result
}

describe('sandbox sessions over MCP', () => {
  test("a client's programs share state, another client's do not, and a disconnect ends the session", async () => {
    await using ptc = await createPtcMcpServer({
      upstreams: [{ name: 'fx', transport: inMemoryFixture() }],
      runtime,
      sandboxSessions: true,
      onWarning: () => undefined,
    })
    const a = await connectInMemory(ptc)
    const b = await connectInMemory(ptc)
    try {
      await run(a, 'const notes = ["first"]; const echoed = await tools["fx.echo"]({ text: "hi" }); return 1')
      expect(await run(a, 'notes.push("second"); return notes')).toEqual(['first', 'second'])
      expect(await run(b, 'return typeof notes')).toBe('undefined')
      // The SDK text the client reads (run_code's description) says how sessions work.
      const listed = await a.listTools()
      expect(listed.tools.find((t) => t.name === 'run_code')?.description).toContain(
        'Programs in a session share state',
      )
    } finally {
      await b.close()
    }
    // Closing a connection ends its session: nothing is left to suspend (while a's still is).
    expect(await runtime.suspendSession?.('ptc-serve:2')).toBeUndefined()
    await a.close()
    expect(await runtime.suspendSession?.('ptc-serve:1')).toBeUndefined()
  })

  test('a live connection keeps its session until it closes', async () => {
    await using ptc = await createPtcMcpServer({
      upstreams: [{ name: 'fx', transport: inMemoryFixture() }],
      runtime,
      sandboxSessions: true,
      onWarning: () => undefined,
    })
    const client = await connectInMemory(ptc)
    await run(client, 'globalThis.kept = 1; return 1')
    const bytes = await runtime.suspendSession?.('ptc-serve:1')
    expect(bytes?.byteLength).toBeGreaterThan(0)
    await client.close()
  })

  test('without --sandbox-sessions every program starts from nothing', async () => {
    await using ptc = await createPtcMcpServer({
      upstreams: [{ name: 'fx', transport: inMemoryFixture() }],
      runtime,
      onWarning: () => undefined,
    })
    const client = await connectInMemory(ptc)
    try {
      await run(client, 'globalThis.kept = 1; return 1')
      expect(await run(client, 'return typeof kept')).toBe('undefined')
    } finally {
      await client.close()
    }
  })

  test('--sandbox-sessions is a flag of ptc serve, on either sandbox', () => {
    expect(parseServeArgs(['--upstream', 'x=node x.js', '--sandbox-sessions']).sandboxSessions).toBe(true)
    expect(
      parseServeArgs(['--upstream', 'x=node x.js', '--sandbox-sessions', '--sandbox', 'isolated-vm']).sandboxSessions,
    ).toBe(true)
    expect(parseServeArgs(['--upstream', 'x=node x.js']).sandboxSessions).toBe(false)
  })
})
