/**
 * `listenHttp` sessions: idle expiry, the session cap, what refused requests
 * cost (counts of live server objects, not RSS), and `close()`.
 */
import type { CodeRuntime } from '@ptc/sandbox'
import { createQuickJSRuntime } from '@ptc/sandbox-quickjs'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { Client, connectHttpClient, httpClientTransport, type CallToolResult } from '@ptc/mcp/testing'
import { INITIALIZE, initializeRaw, mcpHeaders, post, read, rpcError, RUN_ECHO, serve, until } from './http-helpers.js'

let runtime: CodeRuntime
beforeAll(() => {
  runtime = createQuickJSRuntime({ poolSize: 1 })
})
afterAll(async () => {
  await runtime.dispose()
})

const listTools = { jsonrpc: '2.0', id: 2, method: 'tools/list' }
/**
 * The idle time of the expiry tests: long enough that a loaded machine's event-loop stalls (a second
 * and more seen with a build beside the suite) cannot expire a session between two requests of the
 * client's handshake, short enough to wait for.
 */
const IDLE_MS = 1500

describe('Streamable HTTP sessions', () => {
  test('a session with no open request expires after the idle time: its server is closed and its id gets 404', async () => {
    await using served = await serve(runtime, { sessionIdleMs: IDLE_MS })
    const { endpoint } = served
    const transport = httpClientTransport(endpoint.url, { token: endpoint.token })
    const client = new Client({ name: 'ptc-test-client', version: '1.0.0' })
    await client.connect(transport)
    const id = transport.sessionId ?? ''
    expect((await client.callTool(RUN_ECHO)) as CallToolResult).toMatchObject({
      content: [{ type: 'text', text: 'over http' }],
    })
    expect(endpoint.stats()).toMatchObject({ sessions: 1, serversLive: 1 })
    await client.close() // closes its streams without ending the session
    await until(() => endpoint.stats().sessions === 0, 15_000)
    expect(endpoint.stats()).toMatchObject({ sessions: 0, serversLive: 0, serversCreated: 1 })
    const late = await post(endpoint.url, listTools, mcpHeaders({ authorization: served.bearer, 'mcp-session-id': id }))
    expect([late.status, rpcError(late.json).code]).toEqual([404, -32001])
  })

  test('a session in use does not expire: an open request holds it past the idle time', async () => {
    await using served = await serve(runtime, { sessionIdleMs: IDLE_MS })
    const { endpoint, bearer } = served
    const id = await initializeRaw(endpoint.url, bearer)
    const headers = mcpHeaders({ authorization: bearer, 'mcp-session-id': id, 'mcp-protocol-version': '2025-06-18' })
    expect((await post(endpoint.url, { jsonrpc: '2.0', method: 'notifications/initialized' }, headers)).status).toBe(
      202,
    )
    const code = `await tools["fx.sleep"]({ ms: ${IDLE_MS + 1000} }); return "awake"`
    const slow = await post(
      endpoint.url,
      {
        jsonrpc: '2.0',
        id: 3,
        method: 'tools/call',
        params: { name: 'run_code', arguments: { code, description: 'slow' } },
      },
      headers,
    )
    expect(slow.status).toBe(200)
    expect(slow.text).toContain('awake')
    expect(endpoint.stats().sessions).toBe(1)
    await until(() => endpoint.stats().sessions === 0, 15_000)
  })

  test('a client that closes its request mid-run cancels it: the run ends as abort, not at its CPU limit, and the session goes on', async () => {
    // A spinning program with a CPU budget far past the test's timeout: only the cancellation can end it in time.
    const spinning = createQuickJSRuntime({ poolSize: 1, limits: { cpuMs: 600_000, wallMs: 600_000 } })
    try {
      await using served = await serve(spinning)
      const { endpoint, bearer } = served
      const id = await initializeRaw(endpoint.url, bearer)
      const headers = mcpHeaders({ authorization: bearer, 'mcp-session-id': id, 'mcp-protocol-version': '2025-06-18' })
      expect((await post(endpoint.url, { jsonrpc: '2.0', method: 'notifications/initialized' }, headers)).status).toBe(
        202,
      )
      let started!: () => void
      const running = new Promise<void>((resolve) => (started = resolve))
      const ended = new Promise<string>((resolve) => {
        served.ptc.tools.on('tools/result', (exec, result) => {
          if (exec.name === 'run_code')
            resolve(result.content.map((block) => (block.type === 'text' ? block.text : '')).join(''))
        })
      })
      served.ptc.tools.on('tools/pre-execute', (exec, next) => {
        if (exec.name === 'run_code') started()
        return next()
      })
      const client = new AbortController()
      const call = fetch(endpoint.url, {
        method: 'POST',
        headers,
        signal: client.signal,
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 4,
          method: 'tools/call',
          params: { name: 'run_code', arguments: { code: 'for (;;) {}', description: 'spin' } },
        }),
      }).then((response) => response.text())
      await running
      client.abort()
      await expect(call).rejects.toThrow()
      expect(await ended).toMatch(/code run failed \(abort\)/)
      // The session serves the client's next request.
      expect((await post(endpoint.url, listTools, headers)).text).toContain('run_code')
    } finally {
      await spinning.dispose()
    }
  }, 60_000)

  test('past the session cap an initialize gets 503 with Retry-After; a DELETE frees a slot', async () => {
    await using served = await serve(runtime, { maxSessions: 2 })
    const { endpoint, bearer } = served
    const first = await initializeRaw(endpoint.url, bearer)
    await initializeRaw(endpoint.url, bearer)
    const full = await post(endpoint.url, INITIALIZE, mcpHeaders({ authorization: bearer }))
    expect(full.status).toBe(503)
    expect(Number(full.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
    expect(rpcError(full.json).message).toMatch(/too many sessions/)
    expect(endpoint.stats()).toMatchObject({ sessions: 2, serversCreated: 2, serversLive: 2 })
    const deleted = await read(
      await fetch(endpoint.url, { method: 'DELETE', headers: { authorization: bearer, 'mcp-session-id': first } }),
    )
    expect(deleted.status).toBe(200)
    expect(endpoint.stats()).toMatchObject({ sessions: 1, serversLive: 1 })
    await initializeRaw(endpoint.url, bearer)
    expect(endpoint.stats()).toMatchObject({ sessions: 2, serversCreated: 3, serversLive: 2 })
  })

  test('3 000 refused initializes create no server objects and leave no session behind', async () => {
    await using served = await serve(runtime)
    const { endpoint, bearer } = served
    const kinds = [
      () => post(endpoint.url, INITIALIZE, mcpHeaders()),
      () => post(endpoint.url, INITIALIZE, mcpHeaders({ authorization: 'Bearer wrong-token-wrong-token' })),
      () => post(endpoint.url, INITIALIZE, mcpHeaders({ authorization: bearer, origin: 'http://evil.example' })),
      () => post(endpoint.url, '{"jsonrpc":', mcpHeaders({ authorization: bearer })),
      () => post(endpoint.url, listTools, mcpHeaders({ authorization: bearer })),
      () => post(endpoint.url, INITIALIZE, mcpHeaders({ authorization: bearer, 'mcp-session-id': 'gone' })),
    ]
    const statuses = new Map<number, number>()
    for (let i = 0; i < 3000; i += 50) {
      const batch = await Promise.all(Array.from({ length: 50 }, (_, j) => kinds[(i + j) % kinds.length]?.()))
      for (const r of batch) if (r !== undefined) statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1)
    }
    expect(Object.fromEntries(statuses)).toEqual({ 401: 1000, 403: 500, 400: 1000, 404: 500 })
    expect(endpoint.stats()).toMatchObject({
      sessions: 0,
      initializing: 0,
      serversCreated: 0,
      serversLive: 0,
      connectionsRefused: 0,
    })
  }, 180_000) // 9-17 s here; a hang guard, not a timing (a loaded machine took over 60 s)

  test('close() closes every session and server, and the listener', async () => {
    const served = await serve(runtime)
    const { endpoint, bearer } = served
    await initializeRaw(endpoint.url, bearer)
    const client = await connectHttpClient(endpoint.url, { token: endpoint.token })
    expect(endpoint.stats()).toMatchObject({ sessions: 2, serversLive: 2 })
    await served.close()
    expect(endpoint.stats()).toEqual({
      sessions: 0,
      initializing: 0,
      serversCreated: 2,
      serversLive: 0,
      connections: 0,
      connectionsRefused: 0,
    })
    await expect(
      fetch(endpoint.url, {
        method: 'POST',
        headers: mcpHeaders({ authorization: bearer }),
        body: JSON.stringify(INITIALIZE),
      }),
    ).rejects.toThrow()
    await client.close()
  })
})
