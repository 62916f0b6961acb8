/**
 * `listenHttp` against hostile requests: a real endpoint on a free loopback
 * port, the SDK's real client for the accepted cases, raw `fetch` and
 * `node:http` requests for the refused ones.
 */
import { connect, type Socket } from 'node:net'
import type { CodeRuntime } from '@ptc/sandbox'
import { createQuickJSRuntime } from '@ptc/sandbox-quickjs'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { listenHttp } from '@ptc/mcp'
import { connectHttpClient, type CallToolResult } from '@ptc/mcp/testing'
import {
  INITIALIZE,
  initializeRaw,
  mcpHeaders,
  post,
  rawRequest,
  read,
  rpcError,
  RUN_ECHO,
  serve,
  until,
  type Served,
} from './http-helpers.js'

let runtime: CodeRuntime
let served: Served
let url: string
let port: number
beforeAll(async () => {
  runtime = createQuickJSRuntime({ poolSize: 1 })
  served = await serve(runtime, { allowOrigins: ['https://app.example'] })
  url = served.endpoint.url
  port = Number(new URL(url).port)
})
afterAll(async () => {
  await served.close()
  await runtime.dispose()
})

describe('bearer token', () => {
  test('a generated token is 256 random bits in base64url, different per endpoint', async () => {
    expect(served.endpoint.token).toMatch(/^[A-Za-z0-9_-]{43}$/)
    const other = await serve(runtime)
    expect(other.endpoint.token).not.toBe(served.endpoint.token)
    await other.close()
  })

  test('a request without the token, or with a wrong one, gets 401 with WWW-Authenticate: Bearer and a JSON-RPC error', async () => {
    const token = served.endpoint.token ?? ''
    const wrong = [
      undefined,
      'Bearer',
      `Basic ${token}`,
      `Bearer ${token.slice(0, -1)}x`,
      `Bearer ${token}x`,
      `Bearer ${token.slice(0, 10)}`,
      `Bearer  ${token} extra`,
    ]
    for (const authorization of wrong) {
      const response = await post(url, INITIALIZE, mcpHeaders(authorization === undefined ? {} : { authorization }))
      expect(response.status, String(authorization)).toBe(401)
      expect(response.headers.get('www-authenticate')).toMatch(/^Bearer realm="ptc"/)
      expect(rpcError(response.json).code).toBe(-32000)
    }
    const get = await read(await fetch(url, { headers: { accept: 'text/event-stream' } }))
    expect(get.status).toBe(401)
    expect(served.endpoint.stats().serversCreated).toBe(0)
  })

  test('with the right token the SDK client is served (scheme case-insensitive)', async () => {
    const client = await connectHttpClient(url, { token: served.endpoint.token })
    const result = (await client.callTool(RUN_ECHO)) as CallToolResult
    expect(result.content).toEqual([{ type: 'text', text: 'over http' }])
    await client.close()
    expect(
      (await post(url, INITIALIZE, mcpHeaders({ authorization: `bearer ${served.endpoint.token ?? ''}` }))).status,
    ).toBe(200)
  })
})

describe('Origin', () => {
  test('a foreign Origin is refused with 403; the loopback origins, an --allow-origin one and none at all are accepted', async () => {
    for (const origin of [
      'http://evil.example',
      `http://evil.example:${port}`,
      'null',
      `https://127.0.0.1:${port}`,
      `http://127.0.0.1:${port + 1}`,
      'https://app.example.evil',
    ]) {
      const response = await post(url, INITIALIZE, mcpHeaders({ authorization: served.bearer, origin }))
      expect(response.status, origin).toBe(403)
      expect(rpcError(response.json).message).toMatch(/Origin/)
    }
    const created = served.endpoint.stats().serversCreated
    for (const origin of [
      `http://127.0.0.1:${port}`,
      `http://localhost:${port}`,
      `http://[::1]:${port}`,
      'https://app.example',
      'https://APP.example:443',
    ]) {
      expect((await post(url, INITIALIZE, mcpHeaders({ authorization: served.bearer, origin }))).status, origin).toBe(
        200,
      )
    }
    expect((await post(url, INITIALIZE, mcpHeaders({ authorization: served.bearer }))).status).toBe(200)
    expect(served.endpoint.stats().serversCreated).toBe(created + 6)
  })

  test('an allowed origin gets CORS headers (a preflight before the token check), a foreign one none', async () => {
    const preflight = await fetch(url, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://app.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization, content-type',
      },
    })
    expect(preflight.status).toBe(204)
    expect(preflight.headers.get('access-control-allow-origin')).toBe('https://app.example')
    expect(preflight.headers.get('access-control-allow-headers')).toMatch(/authorization.*mcp-session-id/)
    const served200 = await post(
      url,
      INITIALIZE,
      mcpHeaders({ authorization: served.bearer, origin: 'https://app.example' }),
    )
    expect(served200.headers.get('access-control-allow-origin')).toBe('https://app.example')
    expect(served200.headers.get('access-control-expose-headers')).toMatch(/mcp-session-id/)
    expect(served200.headers.get('mcp-session-id')).toMatch(/^[0-9a-f-]{36}$/)
    const unauthorized = await post(url, INITIALIZE, mcpHeaders({ origin: 'https://app.example' }))
    expect([unauthorized.status, unauthorized.headers.get('access-control-allow-origin')]).toEqual([
      401,
      'https://app.example',
    ])
    const foreign = await fetch(url, {
      method: 'OPTIONS',
      headers: { origin: 'http://evil.example', 'access-control-request-method': 'POST' },
    })
    expect([foreign.status, foreign.headers.get('access-control-allow-origin')]).toEqual([403, null])
    const noOrigin = await fetch(url, { method: 'OPTIONS' })
    expect(noOrigin.status).toBe(401)
  })
})

describe('Host', () => {
  test('on a loopback bind, a Host that is not a loopback name with the bound port is refused with 403', async () => {
    const body = JSON.stringify(INITIALIZE)
    for (const host of [
      'evil.example',
      `evil.example:${port}`,
      `127.0.0.1:${port + 1}`,
      'localhost',
      `localhost.evil.example:${port}`,
      `[::2]:${port}`,
      `127.0.0.1:${port}.`,
      `127.0.0.1:${port}@evil.example`,
    ]) {
      const response = await rawRequest({
        port,
        headers: { ...mcpHeaders({ authorization: served.bearer }), host },
        body,
      })
      expect(response.status, host).toBe(403)
      expect(rpcError(JSON.parse(response.text)).message).toMatch(/Host/)
    }
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `LOCALHOST:${port}`, `[::1]:${port}`]) {
      const response = await rawRequest({
        port,
        headers: { ...mcpHeaders({ authorization: served.bearer }), host },
        body,
      })
      expect(response.status, host).toBe(200)
    }
  })

  test('on 0.0.0.0, Host must be a loopback name, a local address or an --allow-host name (traffic sent to 127.0.0.1 only)', async () => {
    const wide = await serve(runtime, { host: '0.0.0.0', allowHosts: ['mcp.example'] })
    try {
      const wport = Number(new URL(wide.endpoint.url).port)
      const headers = mcpHeaders({ authorization: wide.bearer })
      const body = JSON.stringify(INITIALIZE)
      for (const host of ['evil.example', `evil.example:${wport}`, `mcp.example:${wport + 1}`])
        expect((await rawRequest({ port: wport, headers: { ...headers, host }, body })).status, host).toBe(403)
      for (const host of [`127.0.0.1:${wport}`, `localhost:${wport}`, `mcp.example:${wport}`])
        expect((await rawRequest({ port: wport, headers: { ...headers, host }, body })).status, host).toBe(200)
      expect(
        (await rawRequest({ port: wport, headers: { ...mcpHeaders(), host: `127.0.0.1:${wport}` }, body })).status,
      ).toBe(401)
    } finally {
      await wide.close()
    }
  })
})

describe('request bodies and JSON-RPC errors', () => {
  test('a 6 MB body gets 413 and Connection: close; the next request, on a new connection, works', async () => {
    const before = served.endpoint.stats().serversCreated
    const big = JSON.stringify({
      ...INITIALIZE,
      params: { ...INITIALIZE.params, padding: 'x'.repeat(6 * 1024 * 1024) },
    })
    const declared = await post(url, big, mcpHeaders({ authorization: served.bearer }))
    expect(declared.status).toBe(413)
    expect(declared.headers.get('connection')).toBe('close')
    expect(rpcError(declared.json).message).toMatch(/Payload Too Large/)
    // Without Content-Length (chunked): reading stops once the limit passes.
    const chunks = (function* () {
      for (let i = 0; i < 96; i++) yield new TextEncoder().encode('x'.repeat(64 * 1024))
    })()
    const stream = new ReadableStream<Uint8Array>({
      pull: (c) => void ((n) => (n.done ? c.close() : c.enqueue(n.value)))(chunks.next()),
    })
    const chunked = await read(
      await fetch(url, {
        method: 'POST',
        headers: mcpHeaders({ authorization: served.bearer }),
        body: stream,
        duplex: 'half',
      } as RequestInit),
    )
    expect(chunked.status).toBe(413)
    expect(chunks.next().done).toBe(false) // the server stopped reading long before the end
    expect(served.endpoint.stats().serversCreated).toBe(before)
    expect(await initializeRaw(url, served.bearer)).toMatch(/^[0-9a-f-]{36}$/)
  })

  test('Expect: 100-continue gets 100 only after the checks: never for a refused request or a too large Content-Length', async () => {
    const body = JSON.stringify(INITIALIZE)
    const length = String(Buffer.byteLength(body))
    const base = { ...mcpHeaders(), expect: '100-continue', 'content-length': length }
    const noToken = await rawRequest({ port, headers: base, body })
    expect([noToken.status, noToken.continued, noToken.headers.connection]).toEqual([401, false, 'close'])
    const tooLarge = await rawRequest({
      port,
      headers: { ...base, authorization: served.bearer, 'content-length': String(8 * 1024 * 1024) },
    })
    expect([tooLarge.status, tooLarge.continued]).toEqual([413, false])
    const accepted = await rawRequest({ port, headers: { ...base, authorization: served.bearer }, body })
    expect([accepted.status, accepted.continued]).toEqual([200, true])
  })

  test('malformed JSON gets 400 / -32700; a first request that is not an initialize 400 / -32600', async () => {
    const headers = mcpHeaders({ authorization: served.bearer })
    for (const body of ['{"jsonrpc":"2.0",', '', 'nope']) {
      const response = await post(url, body, headers)
      expect(response.status).toBe(400)
      expect(rpcError(response.json)).toEqual({
        code: -32700,
        message: expect.stringMatching(/^Parse error/) as unknown,
      })
    }
    for (const body of [
      { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      [INITIALIZE],
      { ...INITIALIZE, params: {} },
      42,
    ]) {
      const response = await post(url, body, headers)
      expect(response.status).toBe(400)
      expect(rpcError(response.json).code).toBe(-32600)
    }
    const get = await read(await fetch(url, { headers: { authorization: served.bearer, accept: 'text/event-stream' } }))
    expect([get.status, rpcError(get.json).code]).toEqual([400, -32600])
  })

  test('inside a session, malformed JSON gets 400 / -32700 and valid JSON that is no JSON-RPC request 400 / -32600; the session lives on', async () => {
    const id = await initializeRaw(url, served.bearer)
    const headers = mcpHeaders({
      authorization: served.bearer,
      'mcp-session-id': id,
      'mcp-protocol-version': '2025-06-18',
    })
    const parse = await post(url, '{"jsonrpc":"2.0",', headers)
    expect([parse.status, rpcError(parse.json).code]).toEqual([400, -32700])
    const bad = [
      42,
      '"text"',
      'null',
      { foo: 1 },
      { jsonrpc: '1.0', id: 1, method: 'tools/list' },
      { jsonrpc: '2.0', id: 1 },
      { jsonrpc: '2.0', id: 1, method: 7 },
      { jsonrpc: '2.0', id: 1, method: 'tools/list', params: 5 },
      [],
      [{ a: 1 }],
    ]
    for (const body of bad) {
      const response = await post(url, body, headers)
      expect([response.status, rpcError(response.json)], JSON.stringify(body)).toEqual([
        400,
        {
          code: -32600,
          message: expect.stringMatching(/^Invalid Request: the body must be a JSON-RPC 2\.0 message/) as unknown,
        },
      ])
    }
    // An unknown method is a valid request: the protocol server answers it (-32601), and the session still works.
    const unknown = await post(url, { jsonrpc: '2.0', id: 5, method: 'no/such' }, headers)
    expect([unknown.status, unknown.text]).toEqual([200, expect.stringContaining('"code":-32601') as unknown])
    const list = await post(url, { jsonrpc: '2.0', id: 6, method: 'tools/list' }, headers)
    expect([list.status, list.text]).toEqual([200, expect.stringContaining('run_code') as unknown])
  })

  test('an unknown session id gets 404; another method 405; another content type 415; a bad Accept 406', async () => {
    const unknown = await post(
      url,
      { jsonrpc: '2.0', id: 2, method: 'tools/list' },
      mcpHeaders({ authorization: served.bearer, 'mcp-session-id': '00000000-0000-4000-8000-000000000000' }),
    )
    expect([unknown.status, rpcError(unknown.json).code]).toEqual([404, -32001])
    const put = await read(await fetch(url, { method: 'PUT', headers: { authorization: served.bearer } }))
    expect([put.status, put.headers.get('allow'), rpcError(put.json).code]).toEqual([405, 'GET, POST, DELETE', -32000])
    expect(
      (await post(url, INITIALIZE, mcpHeaders({ authorization: served.bearer, 'content-type': 'text/plain' }))).status,
    ).toBe(415)
    expect(
      (await post(url, INITIALIZE, mcpHeaders({ authorization: served.bearer, accept: 'application/json' }))).status,
    ).toBe(406)
    expect(
      (await read(await fetch(new URL('/other', url), { headers: { authorization: served.bearer } }))).status,
    ).toBe(404)
  })

  test('no protocol server is created for an initialize refused by any check', async () => {
    // The keep-alive connections the requests leave open vary.
    const servers = (): unknown => ({ ...served.endpoint.stats(), connections: undefined })
    const before = servers()
    const bearer = served.bearer
    const refused = [
      post(url, INITIALIZE, mcpHeaders()),
      post(url, INITIALIZE, mcpHeaders({ authorization: bearer, origin: 'http://evil.example' })),
      rawRequest({
        port,
        headers: { ...mcpHeaders({ authorization: bearer }), host: 'evil.example' },
        body: JSON.stringify(INITIALIZE),
      }),
      post(url, 'x'.repeat(2 * 1024 * 1024), mcpHeaders({ authorization: bearer })),
      post(url, '{', mcpHeaders({ authorization: bearer })),
      post(url, { ...INITIALIZE, method: 'ping' }, mcpHeaders({ authorization: bearer })),
      post(url, INITIALIZE, mcpHeaders({ authorization: bearer, 'content-type': 'text/plain' })),
      post(url, INITIALIZE, mcpHeaders({ authorization: bearer, 'mcp-session-id': 'forged' })),
    ]
    expect((await Promise.all(refused)).map((r) => r.status)).toEqual([401, 403, 403, 413, 400, 400, 415, 404])
    expect(servers()).toEqual(before)
  })

  test('an internal error is 500 / -32603 without its message or stack; the slot it reserved is released', async () => {
    const errors: string[] = []
    const failing = {
      ...served.ptc,
      connect: () => Promise.reject(new Error('secret detail at /srv/internal/file.ts:12:3')),
    }
    await using endpoint = await listenHttp(failing, { port: 0, onError: (m) => errors.push(m) })
    const response = await post(
      endpoint.url,
      INITIALIZE,
      mcpHeaders({ authorization: `Bearer ${endpoint.token ?? ''}` }),
    )
    expect([response.status, rpcError(response.json)]).toEqual([500, { code: -32603, message: 'Internal error' }])
    expect(response.text).not.toMatch(/secret|srv|file\.ts/)
    expect(errors).toEqual([expect.stringContaining('secret detail') as unknown])
    expect(endpoint.stats()).toMatchObject({ sessions: 0, initializing: 0, serversLive: 0 })
  })
})

describe('connections', () => {
  /** A raw connection to `port`: what it received, and whether it closed. */
  function rawConnection(port: number): { socket: Socket; received: () => string; closed: () => boolean } {
    const socket = connect(port, '127.0.0.1')
    let text = ''
    let closed = false
    socket.setEncoding('utf8')
    socket.on('data', (chunk: string) => (text += chunk))
    socket.on('error', () => undefined)
    socket.on('close', () => (closed = true))
    return { socket, received: () => text, closed: () => closed }
  }

  test('a connection that sends nothing, or trickles its headers, is closed after headersTimeoutMs; a body not sent in time gets 408', async () => {
    await using slow = await serve(runtime, { headersTimeoutMs: 300, requestReadTimeoutMs: 600 })
    const slowPort = Number(new URL(slow.endpoint.url).port)
    const silent = rawConnection(slowPort)
    const trickle = rawConnection(slowPort)
    trickle.socket.write(`POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${slowPort}\r\n`)
    const more = setInterval(() => trickle.socket.write('X-Slow: 1\r\n'), 50)
    const body = rawConnection(slowPort)
    body.socket.write(
      `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${slowPort}\r\nAuthorization: ${slow.bearer}\r\nContent-Type: application/json\r\n` +
        `Accept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n{"jsonrpc":`,
    )
    try {
      // Node's own defaults held each of them 60 s or more (300 s for the body).
      await until(() => silent.closed() && trickle.closed() && body.closed(), 15_000)
    } finally {
      clearInterval(more)
    }
    expect(body.received()).toMatch(/^HTTP\/1\.1 408 /)
    expect(slow.endpoint.stats()).toMatchObject({ connections: 0, sessions: 0 })
  })

  test('a response may stream for longer than the request read timeouts', async () => {
    await using slow = await serve(runtime, { headersTimeoutMs: 200, requestReadTimeoutMs: 200 })
    const client = await connectHttpClient(slow.endpoint.url, { token: slow.endpoint.token })
    try {
      const result = (await client.callTool({
        name: 'run_code',
        arguments: { code: 'return await tools["fx.sleep"]({ ms: 1500 })', description: 'long' },
      })) as CallToolResult
      expect(result.isError).not.toBe(true)
      expect(result.content).toEqual([{ type: 'text', text: 'slept 1500' }])
    } finally {
      await client.close()
    }
  })

  test('past maxConnections a connection is closed as soon as it is accepted; once one closes, a client is served', async () => {
    const errors: string[] = []
    await using capped = await serve(runtime, { maxConnections: 3, onError: (m) => errors.push(m) })
    const cappedPort = Number(new URL(capped.endpoint.url).port)
    const held = [rawConnection(cappedPort), rawConnection(cappedPort), rawConnection(cappedPort)]
    await until(() => capped.endpoint.stats().connections === 3)
    const refused = rawConnection(cappedPort)
    await until(() => refused.closed())
    expect(refused.received()).toBe('')
    expect(held.some((c) => c.closed())).toBe(false)
    expect(capped.endpoint.stats()).toMatchObject({ connections: 3, connectionsRefused: 1 })
    expect(errors).toEqual(['refused a connection: 3 are open (maxConnections)'])
    held[0]?.socket.destroy()
    await until(() => capped.endpoint.stats().connections === 2)
    const answer = await rawRequest({
      port: cappedPort,
      headers: mcpHeaders({ authorization: capped.bearer }),
      body: JSON.stringify(INITIALIZE),
    })
    expect(answer.status).toBe(200)
    for (const c of held) c.socket.destroy()
  })

  test('the timeouts and the connection cap are checked', async () => {
    await expect(listenHttp(served.ptc, { port: 0, maxConnections: 0 })).rejects.toThrow(
      'maxConnections must be a positive integer, not 0',
    )
    await expect(listenHttp(served.ptc, { port: 0, headersTimeoutMs: 2 ** 31 })).rejects.toThrow(
      /headersTimeoutMs must be a positive integer of at most 2147483647/,
    )
    // An idle timer longer than Node's longest delay would fire at once and close every session at its first pause.
    await expect(listenHttp(served.ptc, { port: 0, sessionIdleMs: 2 ** 31 })).rejects.toThrow(
      'sessionIdleMs must be a positive integer of at most 2147483647, not 2147483648',
    )
    await expect(
      listenHttp(served.ptc, { port: 0, headersTimeoutMs: 5000, requestReadTimeoutMs: 1000 }),
    ).rejects.toThrow(
      'headersTimeoutMs (5000) must not exceed requestReadTimeoutMs (1000): the headers are part of the request',
    )
    // One given alone moves the other's default.
    await using short = await listenHttp(served.ptc, { port: 0, requestReadTimeoutMs: 1000 })
    await using long = await listenHttp(served.ptc, { port: 0, headersTimeoutMs: 60_000 })
    expect(short.url).toMatch(/^http:/)
    expect(long.url).toMatch(/^http:/)
  })
})
