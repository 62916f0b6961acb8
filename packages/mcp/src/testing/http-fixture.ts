import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js'
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import { createFixtureServer, type FixtureServerOptions } from './fixture-server.js'

/** The fixture server listening on a loopback port. */
export interface HttpFixture extends AsyncDisposable {
  /** Its MCP endpoint: `http://127.0.0.1:PORT/mcp` (Streamable HTTP) or `…/sse` (legacy HTTP+SSE). */
  readonly url: string
  /** Requests refused for a missing or wrong required header. */
  readonly refused: number
  close(): Promise<void>
}

/**
 * Serve the fixture server over real HTTP on 127.0.0.1 (a free port): `streamable-http` (stateless, a fresh
 * server per request) or the legacy `sse` transport (`GET /sse`, `POST /messages`, which answers a POST to
 * `/mcp` with 405 as an old server does). With `requireHeader`, a request without that header value gets 401.
 * With `redirect`, a request for one of its paths is answered with that status and `Location` (the value).
 */
export async function serveFixtureOverHttp(
  options: FixtureServerOptions & {
    protocol: 'streamable-http' | 'sse'
    requireHeader?: readonly [name: string, value: string]
    redirect?: { readonly status: number; readonly from: Readonly<Record<string, string>> }
  },
): Promise<HttpFixture> {
  let refused = 0
  const legacy = new Map<string, SSEServerTransport>()
  const authorized = (req: IncomingMessage): boolean => {
    if (options.requireHeader === undefined) return true
    const [name, value] = options.requireHeader
    return req.headers[name.toLowerCase()] === value
  }
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (!authorized(req)) {
      refused++
      res.writeHead(401, { 'content-type': 'text/plain' }).end('missing or wrong credentials')
      return
    }
    const path = new URL(req.url ?? '/', 'http://127.0.0.1').pathname
    const location = options.redirect?.from[path]
    if (location !== undefined) return void res.writeHead(options.redirect?.status ?? 307, { location }).end()
    if (options.protocol === 'streamable-http' && path === '/mcp') {
      const transport = new StreamableHTTPServerTransport({})
      const server = createFixtureServer(options)
      res.on('close', () => void transport.close().then(() => server.close()))
      await server.connect(transport)
      await transport.handleRequest(req, res)
      return
    }
    if (options.protocol === 'sse' && req.method === 'GET' && path === '/sse') {
      const transport = new SSEServerTransport('/messages', res)
      legacy.set(transport.sessionId, transport)
      res.on('close', () => legacy.delete(transport.sessionId))
      await createFixtureServer(options).connect(transport)
      return
    }
    if (options.protocol === 'sse' && req.method === 'POST' && path === '/messages') {
      const transport = legacy.get(new URL(req.url ?? '/', 'http://127.0.0.1').searchParams.get('sessionId') ?? '')
      if (transport === undefined) return void res.writeHead(404).end('no such session')
      await transport.handlePostMessage(req, res)
      return
    }
    res.writeHead(path === '/mcp' ? 405 : 404).end()
  }
  const http = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500)
      res.end()
    })
  })
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve))
  const { port } = http.address() as AddressInfo
  const close = async (): Promise<void> => {
    for (const transport of legacy.values()) await transport.close().catch(() => undefined)
    http.closeAllConnections()
    await new Promise<void>((resolve) => http.close(() => resolve()))
  }
  return {
    url: `http://127.0.0.1:${port}/${options.protocol === 'sse' ? 'sse' : 'mcp'}`,
    get refused() {
      return refused
    },
    close,
    [Symbol.asyncDispose]: close,
  }
}
